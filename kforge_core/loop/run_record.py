"""A run's row in the store changes only through work this process does. A resume replays the recorded steps
without writing anything: the row is claimed (``running``, this process) and the best found so far written only
when the first new step begins. So a resume that ends, or is stopped, before new work (a finished run resumed
without a larger budget, an interrupt, a closed pipe: ``kforge run --resume ID | head``) leaves the run as it was."""

from __future__ import annotations

from ..store import RunInfo, RunStore
from ..store.attempts import Attempt


class RunRecord:
    """The writes to run ``run``'s row. ``resumed``: the run was made by an earlier process (``kforge run
    --resume``); a new run is this process's own from the start."""

    def __init__(self, store: RunStore, run: RunInfo, *, resumed: bool) -> None:
        self.store = store
        self.run = run
        self.changed = not resumed  # whether this process wrote to the run (made it, or did a new step)
        self._best: Attempt | None = None  # the best of the replayed steps, not written yet

    def before_new_step(self) -> None:
        """The journal is about to do its first step that is not a replay: the run is this process's from now on."""
        if self.changed:
            return
        self.store.claim(self.run.id)
        self.changed = True
        if self._best is not None:  # the same as stored, unless the last process ended before writing it
            self.new_best(self._best)

    def new_best(self, attempt: Attempt) -> None:
        if not self.changed:
            self._best = attempt
            return
        outcome = attempt.outcome
        assert outcome is not None and outcome.runtime_ms is not None
        self.store.set_best(self.run.id, attempt.place.label, outcome.runtime_ms, outcome.best_speedup)

    @property
    def unchanged_finish(self) -> bool:
        """True when the run was finished before and this process did no new step: it stays exactly as it was."""
        return not self.changed and self.run.status == "finished"
