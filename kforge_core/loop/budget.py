"""When a run stops: LLM calls, tokens, cost and wall time, counted across resumes, and held under concurrency.

Several requests may be in flight at once (``kforge run --width``). Each is admitted by :meth:`Budget.admit`
before it is sent, holding a :class:`Reservation`: its requests (retries included, each admitted before it is
sent) and the most tokens and cost it can use (:class:`RequestBound`). While others are in flight, a request is
admitted only when it fits the budget with every request in flight counted at its most, so requests in flight never
take the run past a budget; a request with none beside it follows the one-at-a-time rule (it starts while the budget
is not spent), so a width-1 run stops exactly where it always did.
"""

from __future__ import annotations

import itertools
import threading
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
        """Continue from a replayed step's recorded time (never back: steps of a round replay in any order)."""
        if recorded_elapsed > self.elapsed():
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


@dataclass(frozen=True)
class RequestBound:
    """The most one request can use: its prompt's tokens at most (see ``kforge_core.llm.bounds``) plus the most
    the model may answer, and that at the model's price (None: unpriced)."""

    tokens: int = 0
    cost_usd: float | None = None


@dataclass
class Reservation:
    """What one call in flight holds of the budget until it is charged or released."""

    number: int
    bound: RequestBound
    requests: int = 1


class Budget:
    def __init__(self, settings: BudgetSettings, clock: RunClock) -> None:
        self.settings = settings
        self.clock = clock
        self.spent = Spent()
        self._lock = threading.Lock()
        self._in_flight: dict[int, Reservation] = {}
        self._numbers = itertools.count(1)
        self.most_in_flight = 0  # the most requests that were ever in flight at once

    @property
    def in_flight(self) -> int:
        with self._lock:
            return len(self._in_flight)

    def charge(self, call: LLMCall, reservation: Reservation | None = None) -> None:
        """Count a finished call (a replayed one has no reservation); its reservation ends."""
        with self._lock:
            if reservation is not None:
                self._in_flight.pop(reservation.number, None)
            self.spent.llm_calls += 1
            self.spent.requests += call.requests
            self.spent.input_tokens += call.input_tokens
            self.spent.output_tokens += call.output_tokens
            if call.cost_usd is None:
                self.spent.unpriced_calls += 1
            else:
                self.spent.cost_usd += call.cost_usd

    def release(self, reservation: Reservation) -> None:
        """End a reservation whose call failed: its requests still count (they were sent), tokens none."""
        with self._lock:
            if self._in_flight.pop(reservation.number, None) is not None:
                self.spent.requests += reservation.requests

    def exhausted(self) -> str | None:
        """Why no further LLM call may start (counting nothing in flight), or None."""
        with self._lock:
            return self._refusal(RequestBound(), alone=True)

    def check(self) -> None:
        reason = self.exhausted()
        if reason is not None:
            raise BudgetExhausted(reason)

    def admit(self, bound: RequestBound) -> Reservation | str:
        """A reservation for one request that may now be sent, or why not. With requests in flight, a refusal may
        pass once they end; with none, it is final (the budget is spent)."""
        with self._lock:
            reason = self._refusal(bound, alone=not self._in_flight)
            if reason is not None:
                return reason
            reservation = Reservation(next(self._numbers), bound)
            self._in_flight[reservation.number] = reservation
            self.most_in_flight = max(self.most_in_flight, len(self._in_flight))
            return reservation

    def retry_gate(self, reservation: Reservation):  # noqa: ANN201 - a RetryGate
        """What ``ChatClient.ask`` asks before it retries the reserved call: one more request is admitted (and
        counted in the reservation) when it fits with every request in flight."""
        def may_retry(failed_requests: int, delay_s: float) -> bool:
            s = self.settings
            with self._lock:
                if self.spent.requests + self._requests_in_flight() + 1 > s.max_llm_calls:
                    return False
                if s.max_wall_s > 0 and self.clock.elapsed() + delay_s >= s.max_wall_s:
                    return False
                reservation.requests += 1
                return True
        return may_retry

    def may_retry(self, failed_requests: int, delay_s: float) -> bool:
        """Whether one more request, after waiting ``delay_s``, still fits the budget (a call with nothing else in
        flight; one with a reservation asks :meth:`retry_gate`)."""
        s = self.settings
        if self.spent.requests + failed_requests + 1 > s.max_llm_calls:
            return False
        return not (s.max_wall_s > 0 and self.clock.elapsed() + delay_s >= s.max_wall_s)

    # ------------------------------------------------------------------------------------------ inside

    def _requests_in_flight(self) -> int:
        return sum(r.requests for r in self._in_flight.values())

    def _refusal(self, bound: RequestBound, *, alone: bool) -> str | None:
        s, spent = self.settings, self.spent
        if spent.requests + self._requests_in_flight() + 1 > s.max_llm_calls:
            if alone:
                return f"the budget of {s.max_llm_calls} LLM calls is spent"
            return "the requests in flight may use the rest of the LLM calls"
        if spent.tokens >= s.max_tokens:
            return f"the budget of {s.max_tokens:,} tokens is spent ({spent.tokens:,} used)"
        if s.max_cost_usd > 0 and spent.cost_usd >= s.max_cost_usd:
            return f"the budget of ${s.max_cost_usd:g} is spent (${spent.cost_usd:.4f})"
        if s.max_wall_s > 0 and self.clock.elapsed() >= s.max_wall_s:
            return f"the wall-time budget of {s.max_wall_s:.0f} s is spent"
        if alone:
            return None
        held = [r.bound for r in self._in_flight.values()] + [bound]
        if spent.tokens + sum(b.tokens for b in held) > s.max_tokens:
            return "the requests in flight may use the rest of the tokens"
        costs = [b.cost_usd for b in held]
        if s.max_cost_usd > 0 and None not in costs and spent.cost_usd + sum(costs) > s.max_cost_usd:  # type: ignore[arg-type]
            return "the requests in flight may use the rest of the cost budget"
        return None
