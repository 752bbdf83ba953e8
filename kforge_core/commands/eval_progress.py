"""``kforge eval``'s account of an evaluation as it happens, on standard error: a line as each phase begins
(compile, verify, timing, ...) and each step within one (a trial judged, a block of timed runs, the baselines). On
a terminal the steps are a status line that the next one replaces; elsewhere (a pipe, a log), a line each, a block
of timed runs once."""

from __future__ import annotations

from rich.console import Console
from rich.live import Live
from rich.text import Text

from ..harness.host.phases import EvaluationStep, Observer

# what each phase is called as it begins; the others (waiting for a build ahead, the check of the worker after the
# candidate) take no time worth a line
_PHASES = {
    "reference": "getting the reference's outputs", "worker": "getting a worker ready", "compile": "compiling",
    "verify": "verifying", "timing": "timing", "baselines": "baselines:", "profile": "profiling",
}


class EvalProgress:
    """A context manager. :meth:`observer` gives a candidate's observer; :meth:`pause` clears the status line
    before the verdict is printed."""

    def __init__(self, console: Console | None = None) -> None:
        self.console = console or Console(stderr=True, highlight=False, soft_wrap=True)
        # standard output is the verdict's, never redirected through the status line's console
        self._live = Live(Text(""), console=self.console, transient=True, auto_refresh=False,
                          redirect_stdout=False, redirect_stderr=False)
        self._blocks: set[int] = set()

    def __enter__(self) -> EvalProgress:
        return self

    def __exit__(self, *exc: object) -> None:
        self.pause()

    def observer(self, label: str) -> Observer:
        self._blocks = set()
        if self.console.is_terminal:
            self._live.start()
        return lambda step: self._show(label, step)

    def pause(self) -> None:
        self._live.update(Text(""))
        self._live.stop()

    def _show(self, label: str, step: EvaluationStep) -> None:
        if step.number == 0:
            if step.phase in _PHASES:
                self._line(f"{label}: {_PHASES[step.phase]}" + (f" {step.what}" if step.what else ""))
            return
        if step.phase == "verify":
            text = f"{label}: trial {step.number}/{step.of} {step.what}"
        else:
            text = f"{label}: {step.phase} block {step.number}/{step.of}: {step.what}"
        if self.console.is_terminal:
            self._live.update(Text(text, style="cyan"), refresh=True)
        elif step.phase != "timing":
            self._line(text)
        elif step.number not in self._blocks:  # a block once, whoever runs in it
            self._blocks.add(step.number)
            self._line(f"{label}: {step.phase} block {step.number}/{step.of}")

    def _line(self, text: str) -> None:
        if self.console.is_terminal:  # a new phase: the last one's step is done
            self._live.update(Text(""))
        self.console.print(text, markup=False)  # above the status line, when there is one
