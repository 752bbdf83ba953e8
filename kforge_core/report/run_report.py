"""A run as people read it, rebuilt from the store: its attempts, its optimization rounds and what it used.

``report.md``, the plot, ``best.py`` and ``kforge show`` are all made from this one reading of the store.
"""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path

from ..codec import from_json, record_from_json
from ..harness.verdict import RuntimeStats, ShapeTiming
from ..precision_contract import PrecisionContract, contract_named
from ..records import Candidate
from ..store import RunInfo, RunStore, StepRecord
from ..store.attempts import Outcome
from ..tolerances import describe_tolerances


@dataclass(frozen=True)
class AttemptRow:
    """One generation attempt and, when its reply held code, the verdict on it."""

    number: int  # 1, 2, ... over the whole run
    pass_kind: str
    round: int
    attempt: int
    label: str
    candidate: Candidate | None
    no_code: str
    outcome: Outcome | None
    step_dir: str  # the generation step's directory, relative to the run directory
    member: int = 0  # its place among the candidates asked for at once (0: the only one)
    parent: str = ""  # the label of the candidate it improves (optimization rounds of a wide search)
    follows: str = ""  # what it follows: a recommendation, an approach, a repair of another attempt
    elapsed_s: float = 0.0  # the run's time when its verdict (or its reply, without code) was stored

    @property
    def speedup(self) -> float | None:
        """Against the faster baseline, when it is ranked."""
        return self.outcome.best_speedup if self.rankable and self.outcome is not None else None

    @property
    def verdict(self) -> str:
        if self.candidate is None:
            return "no code"
        return self.outcome.verdict_text if self.outcome is not None else "not evaluated"

    @property
    def rankable(self) -> bool:
        return self.outcome is not None and self.outcome.rankable


@dataclass(frozen=True)
class RoundRow:
    """One optimization round: the profile summary of the best candidate and the analyst's recommendations."""

    round: int
    profiled: str  # label of the candidate that was profiled
    summary: str
    images: tuple[str, ...]  # relative to the run directory
    recommendations: str


@dataclass(frozen=True)
class UsageRow:
    agent: str
    model: str
    calls: int
    requests: int
    input_tokens: int
    output_tokens: int
    cost_usd: float | None  # None when any call of this model had no price


@dataclass(frozen=True)
class ReferenceRow:
    """A kernel retrieved from the index and shown to the generation agent (``warm_start``: same problem, same
    backend)."""

    key: str
    problem: str
    backend: str
    score: float
    warm_start: bool
    why: str
    figures: str


@dataclass(frozen=True)
class RunReport:
    run: RunInfo
    attempts: tuple[AttemptRow, ...]
    rounds: tuple[RoundRow, ...]
    usage: tuple[UsageRow, ...]
    baselines: tuple[tuple[str, float], ...]
    references: tuple[ReferenceRow, ...] = ()
    shape_timings: tuple[ShapeTiming, ...] = ()  # the best timed at each shape (``--time-shapes``); empty: not
    shapes_timed_for: str = ""  # the label of the candidate timed at each shape

    @property
    def wide(self) -> bool:
        """Whether the run searched wider than one candidate at a time (``--width``, ``--keep``)."""
        return any(a.member or a.parent for a in self.attempts)

    @property
    def best(self) -> AttemptRow | None:
        """The fastest correct, unflagged attempt (what ``best.py`` holds)."""
        ranked = [a for a in self.attempts if a.rankable]
        return min(ranked, key=lambda a: a.outcome.runtime_ms) if ranked else None  # type: ignore[union-attr]

    @property
    def run_dir(self) -> Path:
        return self.run.run_dir

    @property
    def contract(self) -> PrecisionContract:
        """The precision contract every candidate of the run was held to."""
        return contract_named(self.run.precision)

    @property
    def tolerances(self) -> tuple[tuple[str, float, float], ...]:
        """``(dtype, atol, rtol)`` the outputs were held to, as the harness applied them (empty before any
        evaluation)."""
        return next((a.outcome.tolerances for a in self.attempts if a.outcome and a.outcome.tolerances), ())

    def precision_terms(self) -> str:
        """``"bf16: may compute in float32, TF32, float16 and bfloat16; float32 outputs within atol=0.02, ..."``."""
        held = describe_tolerances(self.tolerances)
        return f"{self.contract.name}: may compute in {self.contract.computes_in}" + (f"; {held}" if held else "")

    @classmethod
    def from_store(cls, store: RunStore, run_id: str) -> RunReport:
        run = store.get_run(run_id)
        steps = store.steps(run_id)
        return cls(run, _attempts(steps), _rounds(steps), _usage(steps), _baselines(steps), _references(steps),
                   *_shape_timings(steps))


def _attempts(steps: list[StepRecord]) -> tuple[AttemptRow, ...]:
    rows: list[AttemptRow] = []
    outcomes = {s.label: s for s in steps if s.kind == "evaluation"}  # a candidate's steps share its label
    for step in (s for s in steps if s.kind == "generation"):
        stored = step.data.get("candidate")
        evaluation = outcomes.get(step.label)
        tree = step.data.get("tree") or {}
        rows.append(AttemptRow(
            number=len(rows) + 1, pass_kind=step.pass_kind, round=step.round, attempt=step.attempt,
            label=step.label, candidate=record_from_json(Candidate, stored) if stored else None,
            no_code=step.data.get("no_code", ""),
            outcome=record_from_json(Outcome, evaluation.data) if evaluation is not None else None,
            step_dir=step.artifact_dir, member=tree.get("member", 0), parent=tree.get("parent") or "",
            follows=tree.get("follows", ""),
            elapsed_s=evaluation.elapsed_s if evaluation is not None else step.elapsed_s,
        ))
    return tuple(rows)


def _rounds(steps: list[StepRecord]) -> tuple[RoundRow, ...]:
    profiles: dict[int, StepRecord] = {}
    last_profile: StepRecord | None = None
    rounds: list[RoundRow] = []
    by_candidate: dict[str, StepRecord] = {}
    for step in steps:
        if step.kind == "profile":
            last_profile = profiles[step.round] = by_candidate[step.data.get("candidate_label", "")] = step
        elif step.kind == "analysis":
            parent = (step.data.get("tree") or {}).get("parent")
            if parent is not None:  # a wide search's round analyses each of its parents
                profile = by_candidate.get(parent)
            else:
                profile = profiles.get(step.round, last_profile)  # a best profiled in an earlier round is reused
            summary = (profile.data.get("summary") or {}) if profile is not None else {}
            rounds.append(RoundRow(
                round=step.round,
                profiled=profile.data.get("candidate_label", "") if profile is not None else "",
                summary=summary.get("text", "") if summary else (profile.data.get("why", "") if profile else ""),
                images=tuple(i["path"] for i in summary.get("images", [])) if summary else (),
                recommendations=step.data.get("recommendations", ""),
            ))
    return tuple(rounds)


def _usage(steps: list[StepRecord]) -> tuple[UsageRow, ...]:
    rows: dict[tuple[str, str], UsageRow] = {}
    for step in steps:
        call = step.llm_call
        if call is None:
            continue
        old = rows.get((call.agent, call.model)) or UsageRow(call.agent, call.model, 0, 0, 0, 0, 0.0)
        cost = None if old.cost_usd is None or call.cost_usd is None else old.cost_usd + call.cost_usd
        rows[(call.agent, call.model)] = UsageRow(
            call.agent, call.model, old.calls + 1, old.requests + call.requests,
            old.input_tokens + call.input_tokens, old.output_tokens + call.output_tokens, cost,
        )
    return tuple(rows.values())


def _baselines(steps: list[StepRecord]) -> tuple[tuple[str, float], ...]:
    for step in steps:
        if step.kind == "baselines":
            return tuple((name, RuntimeStats.from_json(stats).figure) for name, stats in step.data["baselines"])
    return ()


def _shape_timings(steps: list[StepRecord]) -> tuple[tuple[ShapeTiming, ...], str]:
    for step in steps:
        if step.kind == "shape_timing":
            return from_json(tuple[ShapeTiming, ...], step.data["shape_timings"]), step.data["candidate_label"]
    return (), ""


def _references(steps: list[StepRecord]) -> tuple[ReferenceRow, ...]:
    for step in steps:
        if step.kind == "references":
            return tuple(ReferenceRow(**row) for row in step.data["references"])
    return ()
