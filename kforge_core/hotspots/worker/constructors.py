"""The arguments each module of a model was built with, recorded while the model is built, so that one module can
be built again, alone, in a problem file (``Model(*get_init_inputs())``)."""

from __future__ import annotations

import inspect
import sys
import weakref
from contextlib import contextmanager
from dataclasses import dataclass
from typing import Any, Iterator


@dataclass(frozen=True)
class Built:
    """How one module was constructed: its class's ``__init__`` parameters and the values they were bound to."""

    parameters: tuple[inspect.Parameter, ...]
    values: dict[str, Any]


class Constructors:
    """The recorded constructions, looked up by module."""

    def __init__(self) -> None:
        self._by_id: dict[int, tuple[Any, Built]] = {}

    def record(self, module: Any, built: Built) -> None:
        self._by_id[id(module)] = (weakref.ref(module), built)

    def known(self, module: Any) -> bool:
        return self.of(module) is not None

    def of(self, module: Any) -> Built | None:
        """How ``module`` was built; None when it was not built while recording (or another module took its
        id after it was freed)."""
        entry = self._by_id.get(id(module))
        return entry[1] if entry is not None and entry[0]() is module else None


@contextmanager
def recording_constructors() -> Iterator[Constructors]:
    """Within the block, every ``nn.Module`` constructed records its arguments.

    A profile function sees each ``__init__`` call with its arguments bound, whatever builds the model (a factory
    of the user's, ``from_config``): nothing in the model's code has to cooperate. Only the most derived class's
    ``__init__`` counts (``super().__init__`` calls see the same ``self``)."""
    import torch

    built = Constructors()

    def profile(frame: Any, event: str, arg: Any) -> None:
        if event != "call" or frame.f_code.co_name != "__init__" or not frame.f_code.co_varnames:
            return
        module = frame.f_locals.get(frame.f_code.co_varnames[0])
        if not isinstance(module, torch.nn.Module) or built.known(module):
            return
        init = type(module).__init__
        if getattr(inspect.unwrap(init), "__code__", None) is not frame.f_code:
            return
        parameters = tuple(inspect.signature(init).parameters.values())[1:]
        values = {p.name: frame.f_locals[p.name] for p in parameters if p.name in frame.f_locals}
        built.record(module, Built(parameters, values))

    previous = sys.getprofile()
    sys.setprofile(profile)
    try:
        yield built
    finally:
        sys.setprofile(previous)
