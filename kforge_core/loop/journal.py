"""Every step of a run goes through the journal: committed to the store as it completes, and, when a killed run is
resumed, replayed from the store instead of being done again.

The loop is deterministic given its steps' results, so a resumed run asks for the same steps: each is found among
the recorded ones by its kind and label (``o2.1-3``: round 2, attempt 1, candidate 3), and must have the same key
(its prompt's digest, its candidate's). The candidates of one attempt of a round are asked for together and finish
in any order, so a run stopped mid-round has recorded some of them and not others: those are done live while the
others replay. Live work beside recorded steps of another place means the run cannot be continued faithfully (as
does a recorded step whose key differs), and resuming stops with an error.

Steps are committed from one thread (the loop's); the work behind them may run in others.
"""

from __future__ import annotations

import re
import shutil
from typing import Any, Callable

from ..errors import KForgeError
from ..store import LLMCall, RunDirectory, RunStore, StepRecord
from ..store.attempts import Place
from .budget import RunClock

# given the step's artifact directory (relative to the run directory), do the work: (data, LLM call or None)
StepWork = Callable[[str], "tuple[dict[str, Any], LLMCall | None]"]
_STEP_DIR = re.compile(r"^(\d+)-")


class Journal:
    def __init__(self, store: RunStore, run_id: str, run_dir: RunDirectory, clock: RunClock,
                 before_new_step: Callable[[], None] = lambda: None) -> None:
        self.store = store
        self.run_id = run_id
        self.run_dir = run_dir
        self.clock = clock
        self._recorded = store.steps(run_id)
        self._unused = {(r.kind, r.label): r for r in self._recorded}
        self._next_seq = max((r.seq for r in self._recorded), default=-1) + 1
        self.last_step_replayed = False
        self._before_new_step = before_new_step  # called before each step that is not a replay
        self._forgotten = False  # the directories of steps begun and never committed, removed before new work

    @property
    def replaying(self) -> bool:
        """True while recorded steps remain to be replayed."""
        return bool(self._unused)

    @property
    def recorded_steps(self) -> int:
        return len(self._recorded)

    def step(self, kind: str, key: str, place: Place, label: str, work: StepWork) -> StepRecord:
        """The recorded step if this is a replay, otherwise the result of ``work``, committed before returning."""
        record = self.replayed(kind, key, place, label)
        if record is not None:
            return record
        artifact_dir = self.start(kind, place, label)
        data, call = work(artifact_dir)
        return self.commit(kind, key, place, label, artifact_dir, data, call)

    def replayed(self, kind: str, key: str, place: Place, label: str) -> StepRecord | None:
        """The recorded step of this kind and label, or None when it must be done live (which is checked to be
        faithful to what was recorded)."""
        record = self._unused.pop((kind, label), None)
        self.last_step_replayed = record is not None
        if record is None:
            self._check_live(kind, key, place)
            return None
        if record.key != key:
            self._unfaithful(record, kind, key)
        self.clock.sync(record.elapsed_s)
        return record

    def start(self, kind: str, place: Place, label: str) -> str:
        """The artifact directory of a step about to be done live (its sequence number is taken now). Before the
        first, what a stopped run began and never committed is removed: a resume changes nothing until it works."""
        self._before_new_step()
        if not self._forgotten:
            self._forget_unrecorded_dirs()
            self._forgotten = True
        seq = self._next_seq
        self._next_seq += 1
        return self.run_dir.step_dir(seq, kind, label)

    def commit(self, kind: str, key: str, place: Place, label: str, artifact_dir: str, data: dict[str, Any],
               call: LLMCall | None) -> StepRecord:
        """Store a step done live, in its own transaction."""
        seq = int(_STEP_DIR.match(artifact_dir.split("/")[-1]).group(1))  # type: ignore[union-attr]
        record = StepRecord(
            seq=seq, kind=kind, key=key, pass_kind=place.pass_kind, round=place.round, attempt=place.attempt,
            label=label, elapsed_s=self.clock.elapsed(), artifact_dir=artifact_dir, data=data, llm_call=call,
        )
        self.store.add_step(self.run_id, record)
        self._recorded.append(record)
        return record

    def _check_live(self, kind: str, key: str, place: Place) -> None:
        """Live work may go on beside recorded steps only of its own attempt (candidates asked for together)."""
        others = [r for r in self._unused.values()
                  if (r.pass_kind, r.round, r.attempt) != (place.pass_kind, place.round, place.attempt)
                  or place.pass_kind == "setup"]
        if others:
            self._unfaithful(min(others, key=lambda r: r.seq), kind, key)

    def _unfaithful(self, record: StepRecord, kind: str, key: str) -> None:
        raise KForgeError(
            f"run {self.run_id} cannot be resumed faithfully: its step {record.seq} is a {record.kind} "
            f"({record.key}), but the loop now asks for a {kind} ({key})",
            hint="the prompts, the backend's lowering or KForge itself changed since the run started; "
            "start a new run (optionally with --reference-run to begin from this run's best kernel)",
        )

    def _forget_unrecorded_dirs(self) -> None:
        """Directories of steps a stopped run began but never committed: their numbers are taken again."""
        steps = self.run_dir.path / "steps"
        if not steps.is_dir():
            return
        recorded = {r.seq for r in self._recorded}
        for path in steps.iterdir():
            match = _STEP_DIR.match(path.name)
            if match and int(match.group(1)) not in recorded and path.is_dir():
                shutil.rmtree(path, ignore_errors=True)
