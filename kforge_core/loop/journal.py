"""Every step of a run goes through the journal: committed to the store before the next step begins, and, when a
killed run is resumed, replayed from the store instead of being done again.

The loop is deterministic given its steps' results, so a resumed run walks the same path: each step it asks for is
the next recorded one, until the records run out and live work continues. A recorded step that does not match
(another kind, another prompt) means the run cannot be continued faithfully, and resuming stops with an error.
"""

from __future__ import annotations

from typing import Any, Callable

from ..errors import KForgeError
from ..store import LLMCall, RunDirectory, RunStore, StepRecord
from ..store.attempts import Place
from .budget import RunClock

# given the step's artifact directory (relative to the run directory), do the work: (data, LLM call or None)
StepWork = Callable[[str], "tuple[dict[str, Any], LLMCall | None]"]


class Journal:
    def __init__(self, store: RunStore, run_id: str, run_dir: RunDirectory, clock: RunClock,
                 before_new_step: Callable[[], None] = lambda: None) -> None:
        self.store = store
        self.run_id = run_id
        self.run_dir = run_dir
        self.clock = clock
        self._recorded = store.steps(run_id)
        self._position = 0
        self.last_step_replayed = False
        self._before_new_step = before_new_step  # called before each step that is not a replay

    @property
    def replaying(self) -> bool:
        """True while recorded steps remain to be replayed."""
        return self._position < len(self._recorded)

    @property
    def recorded_steps(self) -> int:
        return len(self._recorded)

    def step(self, kind: str, key: str, place: Place, label: str, work: StepWork) -> StepRecord:
        """The recorded step if this is a replay, otherwise the result of ``work``, committed before returning."""
        self.last_step_replayed = self.replaying
        if self.replaying:
            return self._replay(kind, key)
        self._before_new_step()
        seq = self._position
        artifact_dir = self.run_dir.step_dir(seq, kind, label)
        data, call = work(artifact_dir)
        record = StepRecord(
            seq=seq, kind=kind, key=key, pass_kind=place.pass_kind, round=place.round, attempt=place.attempt,
            label=label, elapsed_s=self.clock.elapsed(), artifact_dir=artifact_dir, data=data, llm_call=call,
        )
        self.store.add_step(self.run_id, record)
        self._recorded.append(record)
        self._position += 1
        return record

    def _replay(self, kind: str, key: str) -> StepRecord:
        record = self._recorded[self._position]
        if record.kind != kind or record.key != key:
            raise KForgeError(
                f"run {self.run_id} cannot be resumed faithfully: its step {record.seq} is a {record.kind} "
                f"({record.key}), but the loop now asks for a {kind} ({key})",
                hint="the prompts, the backend's lowering or KForge itself changed since the run started; "
                "start a new run (optionally with --reference-run to begin from this run's best kernel)",
            )
        self._position += 1
        self.clock.sync(record.elapsed_s)
        return record
