"""The agent loop: a functional pass until a candidate is correct, then optimization rounds until the budget is
spent or ``patience`` rounds bring no gain.

Functional pass: the generation agent writes a candidate from the problem and the backend's lowering; from the
second attempt it also sees what went wrong last time (no code in the reply, the compiler's log, the verdict).

Optimization round: the best candidate is profiled, the analyst turns the summary into recommendations, and the
generation agent writes a new candidate from them (repairing it within the round's attempts if it fails). A correct
new candidate that is faster becomes the best; it is a gain when it is at least ``min_gain`` faster. No round starts
once the best reaches ``loop.sol_target`` of the problem's speed of light on the device: little is left to gain.

Searching wider (``loop.width`` N, ``loop.keep`` K): each functional attempt asks for N candidates at once, and
each optimization round profiles and analyses each of the K best candidates (its parents) and asks for N candidates
spread over them and over their analysts' recommendations; a failed candidate is repaired in the round's next
attempt. The candidates differ by construction (:mod:`~kforge_core.loop.variants`). Width 1 and keep 1 are the
one-candidate loop.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Callable

from ..agents import AnalysisRequest, GenerationRequest, RoundNote
from ..agents.views import Feedback
from ..llm import NoMoreReplies
from ..records import ProfileSummary
from ..sol_words import percent
from ..settings import BudgetSettings, LoopSettings
from ..store.attempts import Attempt, Place
from .budget import BudgetExhausted
from .population import Activity, Population
from .progress import LoopStatus, Progress
from .steps import LLMJob, LoopSteps
from .variants import Lineage, functional_lineages, optimization_lineages, temperature_of


@dataclass
class LoopResult:
    best: Attempt | None
    stop_reason: str
    attempts: list[Attempt] = field(default_factory=list)


class AgentLoop:
    """Decides what happens next; :class:`~kforge_core.loop.steps.LoopSteps` does each step and persists it, and
    :class:`~kforge_core.loop.population.Population` runs a round's candidates at once."""

    def __init__(
        self, steps: LoopSteps, budget: BudgetSettings, progress: Progress,
        on_new_best: Callable[[Attempt], None] = lambda attempt: None, loop: LoopSettings = LoopSettings(),
        activity: Activity | None = None,
    ) -> None:
        self.steps = steps
        self.budget = budget
        self.search = loop
        self.sol_target = loop.sol_target
        self.progress = progress
        self.on_new_best = on_new_best
        self.best: Attempt | None = None
        self.attempts: list[Attempt] = []
        self.baselines: tuple[tuple[str, float], ...] = ()
        self._summaries: dict[str, ProfileSummary | None] = {}  # by candidate digest: profile each parent once
        self.population = Population(steps, activity)
        steps.stage = self._show_stage

    def _show_stage(self, stage: str, place: Place) -> None:
        self.progress.status(self.status(stage, place))

    def run(self) -> LoopResult:
        try:
            self.baselines = self.steps.baselines()
            self.progress.event("baselines: " + ", ".join(f"{n} {ms:.3f} ms" for n, ms in self.baselines))
            reason = self._functional_pass()
            if self.best is not None:
                reason = self._optimization_rounds()
        except BudgetExhausted as exc:
            reason = exc.reason
        except NoMoreReplies as exc:
            reason = str(exc)
        finally:
            self.population.close()
        return LoopResult(self.best, reason, self.attempts)

    # ---------------------------------------------------------------------------------------- functional

    def _functional_pass(self) -> str:
        lineages = functional_lineages(self.search.width, self.steps.generation.references)
        feedback: list[Feedback | None] = [None] * len(lineages)
        for number in range(1, self.budget.functional_attempts + 1):
            jobs = [self._job(GenerationRequest("functional", 0, number, feedback[m], variant=lineage.variant),
                              Place("functional", 0, number, lineage.member), lineage)
                    for m, lineage in enumerate(lineages)]
            attempts = self.population.attempts(jobs, self._attempted)
            if any(a.rankable for a in attempts):
                return ""
            feedback = [a.feedback() for a in attempts]
        return f"no correct candidate in {self.budget.functional_attempts} functional attempts"

    # -------------------------------------------------------------------------------------- optimization

    def _optimization_rounds(self) -> str:
        rounds, no_gain = self.budget.optimization_rounds, 0
        history: list[RoundNote] = []
        for number in range(1, rounds + 1):
            best = self.best
            assert best is not None and best.candidate is not None
            reached = self._at_the_limit(best)
            if reached:
                return reached
            parents = self._parents()
            recommendations = self._analyses(number, parents, tuple(history))
            new = self._optimization_attempts(number, parents, recommendations)
            note, gained = self._judge(best, new)
            history.append(RoundNote(number, note))
            self.progress.event(f"round {number}: {note}")
            no_gain = 0 if gained else no_gain + 1
            if no_gain >= self.budget.patience:
                return f"{no_gain} optimization round(s) in a row brought no gain"
        return f"all {rounds} optimization rounds done"

    def _parents(self) -> list[Attempt]:
        """The ``keep`` fastest correct candidates so far (distinct code), fastest first."""
        ranked = sorted((a for a in self.attempts if a.rankable), key=lambda a: a.outcome.runtime_ms)  # type: ignore[union-attr]
        parents: list[Attempt] = []
        for attempt in ranked:
            if all(p.candidate.digest != attempt.candidate.digest for p in parents):  # type: ignore[union-attr]
                parents.append(attempt)
            if len(parents) == self.search.keep:
                break
        return parents

    def _analyses(self, number: int, parents: list[Attempt], history: tuple[RoundNote, ...]) -> list[str]:
        """Each parent profiled (once in the run) and analysed: its recommendations, in the parents' order."""
        jobs: list[LLMJob] = []
        for k, parent in enumerate(parents, start=1):
            place = Place("optimization", number, 0, k if self.search.keep > 1 else 0)
            summary = self._summary(parent, place)
            request = AnalysisRequest(number, parent.view(), self.baselines, summary, history)
            jobs.append(self.steps.analysis_job(request, place, {"parent": parent.place.label}))
        return [record.data["recommendations"] for record in self.population.analyses(jobs)]

    def _at_the_limit(self, best: Attempt) -> str:
        """The stop reason when ``best`` reaches ``loop.sol_target`` of the speed of light; empty otherwise."""
        outcome = best.outcome
        assert outcome is not None
        if not self.sol_target or outcome.sol_fraction is None or outcome.sol_fraction < self.sol_target:
            return ""
        return (f"{best.place.label} reaches {outcome.sol_fraction:.0%} of the speed of light "
                f"({outcome.sol_ms:.4g} ms, {outcome.sol_binds}-bound), at or above loop.sol_target "
                f"{self.sol_target:.0%}: little is left to gain")

    def _summary(self, parent: Attempt, place: Place) -> ProfileSummary | None:
        assert parent.candidate is not None
        digest = parent.candidate.digest
        if digest not in self._summaries:
            self._summaries[digest] = self.steps.profile(parent.candidate, place)
        return self._summaries[digest]

    def _optimization_attempts(self, number: int, parents: list[Attempt], recommendations: list[str]) -> Attempt | None:
        """The round's candidates, each failed one repaired in the next attempt; the fastest correct one."""
        lineages = optimization_lineages(self.search.width, [p.place.label for p in parents], recommendations)
        feedback: dict[int, Feedback | None] = {m: None for m in range(len(lineages))}
        correct: list[Attempt] = []
        for attempt_number in range(1, self.budget.optimization_attempts + 1):
            open_ = [m for m in range(len(lineages)) if m in feedback]
            if not open_:
                break
            jobs = []
            for m in open_:
                lineage, parent = lineages[m], parents[lineages[m].parent]
                request = GenerationRequest("optimization", number, attempt_number, feedback[m], parent.view(),
                                            recommendations[lineage.parent], lineage.variant)
                jobs.append(self._job(request, Place("optimization", number, attempt_number, lineage.member),
                                      lineage, repair=attempt_number > 1))
            for m, attempt in zip(open_, self.population.attempts(jobs, self._attempted)):
                if attempt.rankable:
                    correct.append(attempt)
                    del feedback[m]
                else:
                    feedback[m] = attempt.feedback()
        return min(correct, key=lambda a: a.outcome.runtime_ms) if correct else None  # type: ignore[union-attr]

    def _judge(self, previous: Attempt, new: Attempt | None) -> tuple[str, bool]:
        """How the round went, and whether it was a gain of at least ``min_gain``."""
        assert previous.outcome is not None and previous.outcome.runtime_ms is not None
        if new is None or new.outcome is None or new.outcome.runtime_ms is None:
            return "no correct candidate came out of the recommendations", False
        before, after = previous.outcome.runtime_ms, new.outcome.runtime_ms
        change = f"{new.place.label} runs in {after:.3f} ms against {before:.3f} ms for {previous.place.label}"
        if after < before * (1 - self.budget.min_gain):
            return f"gain: {change} ({before / after:.2f}x faster)", True
        if after < before:
            return f"no gain: {change} (faster, but by less than {self.budget.min_gain:.0%})", False
        return f"no gain: {change}", False

    # ------------------------------------------------------------------------------------------ attempts

    def _job(self, request: GenerationRequest, place: Place, lineage: Lineage, *, repair: bool = False) -> LLMJob:
        tree = lineage.tree(place, repair) if self.search.width > 1 or self.search.keep > 1 else {}
        temperature = temperature_of(lineage.member, self.steps.generation_client.settings.temperature,
                                     self.search.temperature_step)
        return self.steps.generation_job(request, place, tree, temperature)

    def _attempted(self, attempt: Attempt, replayed: bool) -> None:
        self.attempts.append(attempt)
        if attempt.rankable and self._faster_than_best(attempt):
            self.best = attempt
            self.on_new_best(attempt)
        from_store = "  [from the store]" if replayed else ""
        self.progress.event(f"{self._describe(attempt)}  ({self._spent()}){from_store}")

    def _spent(self) -> str:
        spent = self.steps.budget.spent
        cost = f", ${spent.cost_usd:.4f}" if spent.llm_calls > spent.unpriced_calls else ""
        return f"{spent.tokens:,} tokens{cost}"

    def _faster_than_best(self, attempt: Attempt) -> bool:
        if self.best is None:
            return True
        assert attempt.outcome is not None and self.best.outcome is not None
        return attempt.outcome.runtime_ms < self.best.outcome.runtime_ms  # type: ignore[operator]

    def _describe(self, attempt: Attempt) -> str:
        head = f"{attempt.place.pass_kind} {attempt.place.label}:"
        if attempt.candidate is None:
            return f"{head} no code in the reply ({attempt.no_code})"
        outcome = attempt.outcome
        assert outcome is not None
        if not outcome.rankable:
            message = outcome.message or outcome.compile_log
            if outcome.failure and message.startswith(f"{outcome.failure}:"):
                message = message[len(outcome.failure) + 1:]
            first_line = message.strip().splitlines()[:1]
            return f"{head} {outcome.verdict_text}" + (f": {first_line[0][:160]}" if first_line else "")
        speedups = ", ".join(f"{value:.2f}x vs {name}" for name, value in outcome.speedups)
        sol = f", {percent(outcome.sol_fraction)} of the speed of light" if outcome.sol_fraction is not None else ""
        marker = "  (new best)" if attempt is self.best else ""
        return f"{head} correct, {outcome.runtime_ms:.3f} ms, {speedups}{sol}{marker}"

    def status(self, stage: str, place: Place) -> LoopStatus:
        """The live status line for ``stage`` at ``place``."""
        if place.pass_kind == "optimization":
            pass_name, of = f"optimization {place.round}/{self.budget.optimization_rounds}", self.budget.optimization_attempts
        else:
            pass_name, of = place.pass_kind, self.budget.functional_attempts
        outcome = self.best.outcome if self.best is not None else None
        best = (f"{outcome.best_speedup:.2f}x ({self.best.place.label})"  # type: ignore[union-attr]
                if outcome is not None and outcome.best_speedup is not None else "none yet")
        attempt = f"{place.attempt}/{of}" if place.attempt else "-"
        if place.member:
            attempt += f" ({self.steps.budget.in_flight} in flight)"
        return LoopStatus(pass_name, attempt, stage, best, self.steps.budget.spent)
