"""Showing a run while it works: a live status line (pass, attempt, stage, best speedup, tokens, cost) and one
line per finished step."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Protocol

from rich.console import Console
from rich.live import Live
from rich.text import Text

from .budget import Spent


@dataclass(frozen=True)
class LoopStatus:
    pass_name: str  # "functional", "optimization 2/5"
    attempt: str  # "3/5"
    stage: str  # "generating", "evaluating", "profiling", "analysing"
    best: str  # "1.84x (o1.1)" or "none yet"
    spent: Spent

    def line(self) -> str:
        cost = f"${self.spent.cost_usd:.4f}" if self.spent.unpriced_calls == 0 else (
            f"${self.spent.cost_usd:.4f} + unpriced" if self.spent.cost_usd else "cost n/a")
        return (f"{self.pass_name} | attempt {self.attempt} | {self.stage} | best {self.best} | "
                f"{self.spent.tokens:,} tokens | {cost} | {self.spent.requests} LLM calls")


class Progress(Protocol):
    """Where the loop reports what it is doing."""

    def status(self, status: LoopStatus) -> None: ...

    def event(self, text: str) -> None: ...


class RichProgress:
    """A rich live status line on a terminal; elsewhere (pipes, logs), only the event lines."""

    def __init__(self, console: Console | None = None) -> None:
        self.console = console or Console(highlight=False, soft_wrap=True)
        self._live = Live(Text(""), console=self.console, transient=True, refresh_per_second=8)

    def __enter__(self) -> RichProgress:
        self._live.start()
        return self

    def __exit__(self, *exc: object) -> None:
        self._live.stop()

    def status(self, status: LoopStatus) -> None:
        self._live.update(Text(status.line(), style="cyan"))

    def event(self, text: str) -> None:
        self.console.print(text, markup=False)
