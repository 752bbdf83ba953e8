"""Hooks on the group modules: each call is named in the profile (a range ``kforge.call.N``, N indexing the calls
list) and keyed by what makes it one problem: phase, class, the shape and dtype of its first tensor argument, its
parameters' shapes and dtypes, and its plain attributes (a sliding-window attention layer is not a full one). In
capture mode, the first call of each key keeps clones of its arguments (a key-value cache as the keys and values it
held before the call) and of its outputs."""

from __future__ import annotations

from contextlib import contextmanager
from dataclasses import dataclass, field
from typing import Any, Iterator

from .kinds import GroupModule
from .values import clone_value, first_tensor, tensor_leaves

RANGE_PREFIX = "kforge.call."
PHASE_PREFIX = "kforge.phase."


@dataclass(frozen=True)
class GroupKey:
    phase: str
    class_name: str
    signature: str  # the first tensor argument, the parameters and the plain attributes


@dataclass
class Captured:
    """The first call of a key: the module, its arguments and its outputs (clones)."""

    group: GroupModule
    args: tuple[Any, ...]
    kwargs: dict[str, Any]
    outputs: list[Any] = field(default_factory=list)


class Tracker:
    """Installs the hooks; ``phase`` is set by whoever drives the model."""

    def __init__(self, groups: list[GroupModule]) -> None:
        self.groups = {id(g.module): g for g in groups}
        self.phase = ""
        self.active = False  # inside a phase's step (a decode phase's prefill is not one)
        self.profiling = False
        self.capturing = False
        self.calls: list[tuple[GroupModule, GroupKey]] = []  # every call while profiling, in order
        self.captured: dict[GroupKey, Captured] = {}
        self._fixed: dict[int, str] = {}
        self._open: list[Any] = []
        self._pending: dict[int, Captured] = {}
        self._handles: list[Any] = []

    def install(self) -> None:
        for group in self.groups.values():
            self._handles.append(group.module.register_forward_pre_hook(self._before, with_kwargs=True))
            self._handles.append(group.module.register_forward_hook(self._after, with_kwargs=True,
                                                                   always_call=True))

    def remove(self) -> None:
        for handle in self._handles:
            handle.remove()
        self._handles.clear()

    @contextmanager
    def step(self, phase: str, index: int, profiling: bool) -> Iterator[None]:
        """One step of ``phase``: its calls are tracked; under the profiler, within a range naming the step."""
        from torch.autograd.profiler import record_function

        self.phase, self.active = phase, True
        try:
            if profiling:
                with record_function(f"{PHASE_PREFIX}{phase}.{index}"):
                    yield
            else:
                yield
        finally:
            self.active = False

    def key(self, group: GroupModule, args: tuple[Any, ...], kwargs: dict[str, Any]) -> GroupKey:
        first = first_tensor((args, kwargs))
        served = f"{str(first.dtype).removeprefix('torch.')}{list(first.shape)}" if first is not None else "-"
        fixed = self._fixed.get(id(group.module))
        if fixed is None:
            fixed = self._fixed[id(group.module)] = _fixed_signature(group.module)
        return GroupKey(self.phase, group.class_name, f"{served}|{fixed}")

    def _before(self, module: Any, args: tuple[Any, ...], kwargs: dict[str, Any]) -> None:
        if not self.active or not (self.profiling or self.capturing):
            return
        group = self.groups[id(module)]
        key = self.key(group, args, kwargs)
        if self.profiling:
            from torch.autograd.profiler import record_function

            span = record_function(f"{RANGE_PREFIX}{len(self.calls)}")
            span.__enter__()
            self._open.append(span)
            self.calls.append((group, key))
        if self.capturing and key not in self.captured:
            layer = getattr(module, "layer_idx", None)
            entry = Captured(group, clone_value(args, layer), clone_value(kwargs, layer))
            self.captured[key] = entry
            self._pending[id(module)] = entry

    def _after(self, module: Any, args: tuple[Any, ...], kwargs: dict[str, Any], output: Any) -> None:
        if self.profiling and self._open:
            self._open.pop().__exit__(None, None, None)
        entry = self._pending.pop(id(module), None)
        if entry is not None:
            entry.outputs = [t.detach().clone() for t in tensor_leaves(output)]


def _fixed_signature(module: Any) -> str:
    """What does not change from call to call: parameters (shape and dtype) and plain attributes."""
    parameters = ",".join(f"{name}:{str(p.dtype).removeprefix('torch.')}{list(p.shape)}"
                          for name, p in module.named_parameters())
    plain = ",".join(f"{name}={value!r}" for name, value in sorted(vars(module).items())
                     if not name.startswith("_") and name != "layer_idx"
                     and isinstance(value, (bool, int, float, str, type(None))))
    return f"{parameters}|{plain}"

