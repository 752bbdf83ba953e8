"""Finding a candidate's Numba kernels: the ``@njit`` dispatchers among its module's globals."""

from __future__ import annotations

from types import ModuleType
from typing import Any


def numba_kernels(module: ModuleType) -> dict[str, Any]:
    """The module-level Numba dispatchers of ``module``, by global name (kernels imported from a sibling file of
    the candidate are globals too)."""
    from numba.core.dispatcher import Dispatcher

    return {name: value for name, value in vars(module).items() if isinstance(value, Dispatcher)}


def kernel_name(dispatcher: Any) -> str:
    return getattr(dispatcher.py_func, "__name__", "?")


def uses_fastmath(dispatcher: Any) -> bool:
    return bool(dispatcher.targetoptions.get("fastmath"))


def is_parallel(dispatcher: Any) -> bool:
    return bool(dispatcher.targetoptions.get("parallel"))
