"""Recording Numba's compilations while a candidate is imported and first run: what compiled, for which argument
types, and how long it took. Imports Numba, so only the worker imports this module."""

from __future__ import annotations

from contextlib import contextmanager
from dataclasses import dataclass
from typing import Iterator

from numba.core import event

from kforge_core.plugin_api import StageTimer

from .clock import clock



@dataclass(frozen=True)
class JitCompile:
    """One top-level compilation of a kernel for one signature (nested compilations are part of it)."""

    kernel: str
    signature: str  # "(array(float32, 2d, C), float32)"
    seconds: float

    def describe(self) -> str:
        return f"{self.kernel}{self.signature}"


class _Recorder(event.Listener):
    def __init__(self, timer: StageTimer) -> None:
        self.compiles: list[JitCompile] = []
        self._depth = 0
        self._started: tuple[str, str, float] | None = None
        self._timer = timer

    def on_start(self, ev: event.Event) -> None:
        if self._depth == 0:
            data = ev.data or {}
            dispatcher = data.get("dispatcher")
            name = getattr(getattr(dispatcher, "py_func", None), "__name__", "?")
            signature = "(" + ", ".join(str(t) for t in data.get("args", ())) + ")"
            self._started = (name, signature, clock())
            self.compiles.append(JitCompile(name, signature, 0.0))
            self._timer.enter("build", f"Numba compiling {name}{signature}")
        self._depth += 1

    def on_end(self, ev: event.Event) -> None:
        self._depth -= 1
        if self._depth == 0 and self._started is not None:
            name, signature, start = self._started
            self.compiles[-1] = JitCompile(name, signature, clock() - start)
            self._started = None
            self._timer.leave("build", f"Numba compiling {name}{signature}")


@dataclass
class JitLog:
    compiles: list[JitCompile]

    @property
    def seconds(self) -> float:
        return sum(c.seconds for c in self.compiles)

    @property
    def last(self) -> JitCompile | None:
        """The compilation that was running when a compile error surfaced (they run one after another)."""
        return self.compiles[-1] if self.compiles else None


@contextmanager
def recording_jit(timer: StageTimer | None = None) -> Iterator[JitLog]:
    """Record every top-level Numba compilation inside the ``with`` block, and mark each as a build on ``timer``
    (its time then does not count against the call of forward it happens in)."""
    recorder = _Recorder(timer or StageTimer())
    log = JitLog(recorder.compiles)
    with event.install_listener("numba:compile", recorder):
        yield log
