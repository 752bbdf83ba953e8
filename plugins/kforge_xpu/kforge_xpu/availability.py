"""Whether the ``xpu`` backend can run here, and if not, exactly why. An answer, never an exception.

Four things must hold: PyTorch built with XPU support, an Intel GPU that PyTorch sees, Triton, and Triton's Intel
backend (``triton/backends/intel``; PyTorch's XPU wheels bring it as ``pytorch-triton-xpu``). The first that fails
is the reason given.
"""

from __future__ import annotations

import importlib.util
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from kforge_core.hookspecs import hookimpl
from kforge_core.languages import triton as triton_language
from kforge_core.records import Availability, Backend


@dataclass(frozen=True)
class Platform:
    """What the answer depends on, read from this process by :meth:`here` (a test passes its own).

    :param torch_version: ``torch.__version__``.
    :param xpu: the ``torch.xpu`` module, or None when this torch has none.
    :param xpu_built: whether this torch was compiled with XPU support (``torch._C._has_xpu``).
    :param triton_version: the installed Triton's version, or None when Triton is not installed.
    :param triton_backends: the names of the backends the installed Triton ships (``intel``, ``nvidia``, ...).
    """

    torch_version: str
    xpu: Any
    xpu_built: bool
    triton_version: str | None
    triton_backends: tuple[str, ...] = ()

    @classmethod
    def here(cls) -> Platform:
        import torch

        return cls(
            torch_version=torch.__version__,
            xpu=getattr(torch, "xpu", None),
            xpu_built=bool(getattr(torch._C, "_has_xpu", False)),
            triton_version=triton_language.installed_version(),
            triton_backends=_triton_backends(),
        )


def _triton_backends() -> tuple[str, ...]:
    """The backend packages under ``triton/backends``, found without importing Triton (which is slow)."""
    spec = importlib.util.find_spec("triton")
    if spec is None or not spec.submodule_search_locations:
        return ()
    names = set()
    for location in spec.submodule_search_locations:
        backends = Path(location) / "backends"
        if backends.is_dir():
            names.update(p.name for p in backends.iterdir() if (p / "__init__.py").exists() or (p / "compiler.py").exists())
    return tuple(sorted(names))


def xpu_availability(platform: Platform) -> Availability:
    if platform.xpu is None:
        return Availability.no(f"no torch.xpu in torch {platform.torch_version} (the XPU backend needs PyTorch >= 2.5 "
                               "built for XPU)")
    if not platform.xpu_built:
        return Availability.no(f"torch {platform.torch_version} is built without XPU support (install PyTorch's XPU "
                               "build, e.g. from its xpu wheel index)")
    try:
        count = int(platform.xpu.device_count())
    except Exception as exc:  # a broken Level Zero loader raises here
        return Availability.no(f"torch.xpu could not count devices: {exc}")
    if count == 0:
        return Availability.no("no Intel GPU visible to torch.xpu (device_count() is 0: check the GPU driver, the "
                               "Level Zero loader and ZE_AFFINITY_MASK / ONEAPI_DEVICE_SELECTOR)")
    if platform.triton_version is None:
        return Availability.no("triton not installed (PyTorch's XPU wheels bring pytorch-triton-xpu)")
    if "intel" not in platform.triton_backends:
        shipped = ", ".join(platform.triton_backends) or "none"
        return Availability.no(f"triton {platform.triton_version} has no Intel backend (it ships: {shipped}); "
                               "install pytorch-triton-xpu, the Triton built for Intel GPUs")
    from .device_facts import read_xpu_facts

    facts = read_xpu_facts(platform.xpu, 0)
    return Availability.yes(f"{facts.headline()}, triton {platform.triton_version}")


@hookimpl
def kforge_backend_availability(backend: Backend, options: Any) -> Availability:
    return xpu_availability(Platform.here())
