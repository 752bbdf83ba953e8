"""When a run must stop: LLM calls, tokens, cost and wall time, counted across resumes."""

from __future__ import annotations

import time
from dataclasses import dataclass

from ..settings import BudgetSettings
from ..store import LLMCall


class BudgetExhausted(Exception):
    """Raised before an LLM call that the budget no longer allows; the run ends with ``reason``."""

    def __init__(self, reason: str) -> None:
        super().__init__(reason)
        self.reason = reason


class RunClock:
    """Seconds the run has been working, summed over its sessions (a resumed run continues the count)."""

    def __init__(self) -> None:
        self._base = 0.0
        self._start = time.monotonic()

    def elapsed(self) -> float:
        return self._base + time.monotonic() - self._start

    def sync(self, recorded_elapsed: float) -> None:
        """Continue from a replayed step's recorded time."""
        self._base = recorded_elapsed
        self._start = time.monotonic()


@dataclass
class Spent:
    """What the run has used so far."""

    llm_calls: int = 0
    requests: int = 0
    input_tokens: int = 0
    output_tokens: int = 0
    cost_usd: float = 0.0
    unpriced_calls: int = 0  # calls whose model has no entry in [llm] prices

    @property
    def tokens(self) -> int:
        return self.input_tokens + self.output_tokens


class Budget:
    def __init__(self, settings: BudgetSettings, clock: RunClock) -> None:
        self.settings = settings
        self.clock = clock
        self.spent = Spent()

    def charge(self, call: LLMCall) -> None:
        self.spent.llm_calls += 1
        self.spent.requests += call.requests
        self.spent.input_tokens += call.input_tokens
        self.spent.output_tokens += call.output_tokens
        if call.cost_usd is None:
            self.spent.unpriced_calls += 1
        else:
            self.spent.cost_usd += call.cost_usd

    def exhausted(self) -> str | None:
        """Why no further LLM call may start, or None."""
        s, spent = self.settings, self.spent
        if spent.requests >= s.max_llm_calls:
            return f"the budget of {s.max_llm_calls} LLM calls is spent"
        if spent.tokens >= s.max_tokens:
            return f"the budget of {s.max_tokens:,} tokens is spent ({spent.tokens:,} used)"
        if s.max_cost_usd > 0 and spent.cost_usd >= s.max_cost_usd:
            return f"the budget of ${s.max_cost_usd:g} is spent (${spent.cost_usd:.4f})"
        if s.max_wall_s > 0 and self.clock.elapsed() >= s.max_wall_s:
            return f"the wall-time budget of {s.max_wall_s:.0f} s is spent"
        return None

    def check(self) -> None:
        reason = self.exhausted()
        if reason is not None:
            raise BudgetExhausted(reason)

    def may_retry(self, failed_requests: int, delay_s: float) -> bool:
        """Whether one more request, after waiting ``delay_s``, still fits the budget."""
        s = self.settings
        if self.spent.requests + failed_requests + 1 > s.max_llm_calls:
            return False
        return not (s.max_wall_s > 0 and self.clock.elapsed() + delay_s >= s.max_wall_s)
