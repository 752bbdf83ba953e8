"""The checks of a candidate's timed calls, as the KForge process keeps them. Runs in the KForge process.

Every timed call is checked (``docs/verification.md`` gives the arithmetic: checking a sample of the calls leaves a
candidate lazy on a tenth of them a real chance; checking all of them leaves none). Once a call returned and its
worker copied its outputs, the worker asks which elements to ship (:class:`~kforge_core.harness.protocol.CheckAsk`);
this process draws them from its own randomness (:meth:`TimedCallChecks.answer`), so nothing the candidate can reach
chooses what is looked at. It then sees every shipped call on its way to the referee (:meth:`shipped`) and, when the
timing is over, holds what it drew against the timed calls it saw marked (:meth:`conclude`): a call it never drew
for, outputs shipped under another seed or draw than its own, or a marked call that was never checked is
tampering.
"""

from __future__ import annotations

import secrets
from typing import Iterable

from ...records import Flag
from ...settings import HarnessSettings
from .. import flags as F
from ..call_kinds import TIMED
from ..protocol import CheckAnswer, CheckAsk, Shipped
from ...timing.timed_runs import parse_timed_label, timed_run_seed
from .outside_clock import Interval


class TimedCallChecks:
    """One candidate's timed-call checks."""

    def __init__(self, settings: HarnessSettings) -> None:
        self._settings = settings
        self._drawn: dict[str, tuple[int, int]] = {}  # label -> (the run's seed, the draw)
        self._shipped: set[str] = set()
        self._problems: list[str] = []

    def answer(self, ask: CheckAsk) -> CheckAnswer:
        """The draw for the call that just returned."""
        parsed = parse_timed_label(ask.label)
        if parsed is None:
            self._problems.append(f"the worker asked for a check of {ask.label!r}, which is not a timed call")
        elif ask.label in self._drawn:
            self._problems.append(f"the worker asked twice for a check of {ask.label}")
        elif ask.seed != timed_run_seed(parsed[0], self._settings):
            self._problems.append(f"{ask.label} was said to have inputs of seed {ask.seed}, not its own "
                                  f"({timed_run_seed(parsed[0], self._settings)})")
        draw = secrets.randbits(63)
        self._drawn.setdefault(ask.label, (ask.seed, draw))
        return CheckAnswer(draw)

    def shipped(self, message: Shipped) -> None:
        """A shipped call on its way to the referee."""
        if message.kind != TIMED:
            return
        drawn = self._drawn.get(message.label)
        if drawn is None:
            self._problems.append(f"outputs of {message.label} were shipped without a check being drawn for them")
        elif (message.seed, message.sample_seed) != drawn:
            self._problems.append(f"the outputs shipped for {message.label} were not the ones drawn for it")
        self._shipped.add(message.label)

    def conclude(self, calls: Iterable[Interval]) -> list[Flag]:
        """Tampering, where what was drawn and shipped does not match the timed calls the worker marked."""
        marked = [call.label for call in calls if parse_timed_label(call.label) is not None]
        unchecked = [label for label in dict.fromkeys(marked) if label not in self._shipped]
        problems = list(self._problems)
        if unchecked:
            shown = ", ".join(unchecked[:3]) + (f" and {len(unchecked) - 3} more" if len(unchecked) > 3 else "")
            problems.append(f"{len(unchecked)} of the {len(set(marked))} timed calls never reached the referee "
                            f"({shown})")
        return [F.raise_flag(F.TAMPERING, "; ".join(problems), self._settings)] if problems else []
