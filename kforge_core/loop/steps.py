"""The steps of a run, each done once, persisted through the journal, and replayed on resume:
baselines -> generation -> evaluation -> (profile -> analysis -> generation -> evaluation)...

A step that asks a model (:class:`LLMJob`) or evaluates a candidate is done in three parts so that a round's
candidates can be asked for and evaluated at once (:mod:`~kforge_core.loop.population`): the job is made and looked
up in the journal in the loop's thread, its work runs in a thread of its own, and its result is committed in the
loop's thread again.
"""

from __future__ import annotations

import json
from dataclasses import dataclass, field
from typing import Any, Callable

from ..agents import AnalysisAgent, AnalysisRequest, GenerationAgent, GenerationRequest, Prompt
from ..codec import record_from_json, to_json
from ..harness.verdict import RuntimeStats
from ..llm import ChatClient
from ..records import Candidate, Image, ProfileSummary
from ..store import LLMCall, RunDirectory, StepRecord
from ..store.attempts import Attempt, Outcome, Place
from .budget import Budget, RequestBound, Reservation
from .evaluator import Evaluator
from .journal import Journal

Stage = Callable[[str, Place], None]  # the loop's way of saying what it is doing now


@dataclass(frozen=True)
class LLMJob:
    """One request to a model, as a step: its prompt, where it is, and what the step keeps besides the reply
    (``tree``: the candidate's parent and what it follows).

    :param temperature: the sampling temperature for this request; None: the configured one.
    """

    kind: str  # "generation" or "analysis"
    prompt: Prompt
    place: Place
    client: ChatClient
    tree: dict[str, Any] = field(default_factory=dict)
    temperature: float | None = None

    @property
    def label(self) -> str:
        return self.place.label

    @property
    def key(self) -> str:
        return self.prompt.digest


@dataclass
class LoopSteps:
    journal: Journal
    run_dir: RunDirectory
    generation: GenerationAgent
    analysis: AnalysisAgent
    generation_client: ChatClient
    analysis_client: ChatClient
    evaluators: list[Evaluator]  # one per device; the first measures the baselines and profiles
    budget: Budget
    max_output_tokens: int = 8192
    stage: Stage = lambda stage, place: None
    # how work on the first evaluator is done (the baselines, profiles): the population sends it to that device's
    # thread, where its candidates are evaluated too
    on_device: Callable[[Callable[[], Any]], Any] = lambda work: work()

    @property
    def evaluator(self) -> Evaluator:
        return self.evaluators[0]

    def baselines(self) -> tuple[tuple[str, float], ...]:
        """The baselines' runtimes (ms; each ``RuntimeStats.figure``), measured once by the harness before the first
        candidate."""
        def work(artifact_dir: str) -> tuple[dict[str, Any], None]:
            self.stage("measuring baselines", Place("setup"))
            stats = [[name, to_json(value)] for name, value in self.on_device(self.evaluator.baselines).items()]
            self.run_dir.write(f"{artifact_dir}/baselines.json", json.dumps(dict(stats), indent=2))
            return {"baselines": stats}, None

        step = self.journal.step("baselines", "baselines", Place("setup"), "baselines", work)
        return tuple((name, RuntimeStats.from_json(stats).figure) for name, stats in step.data["baselines"])

    # ------------------------------------------------------------------------------------------ generation

    def generation_job(self, request: GenerationRequest, place: Place, tree: dict[str, Any] | None = None,
                       temperature: float | None = None) -> LLMJob:
        return LLMJob("generation", self.generation.prompt(request), place, self.generation_client, tree or {},
                      temperature)

    def analysis_job(self, request: AnalysisRequest, place: Place, tree: dict[str, Any] | None = None) -> LLMJob:
        return LLMJob("analysis", self.analysis.prompt(request), place, self.analysis_client, tree or {})

    def bound(self, job: LLMJob) -> RequestBound:
        """The most ``job``'s request can use of the budget."""
        prompt = job.prompt.token_bound()
        return RequestBound(prompt + self.max_output_tokens, job.client.cost_of(prompt, self.max_output_tokens))

    def ask(self, job: LLMJob, artifact_dir: str, reservation: Reservation | None) -> tuple[dict[str, Any], LLMCall]:
        """Send ``job``'s prompt and read the reply (in any thread): the step's data and its call."""
        prompt = job.prompt
        self.run_dir.write(f"{artifact_dir}/prompt.md", prompt.as_markdown())
        for i, image in enumerate(prompt.images, start=1):
            self.run_dir.copy_in(image.path, f"{artifact_dir}/prompt-image-{i}{image.path.suffix}")
        gate = self.budget.retry_gate(reservation) if reservation is not None else self.budget.may_retry
        reply = job.client.ask(prompt.messages(), may_retry=gate, temperature=job.temperature)
        self.run_dir.write(f"{artifact_dir}/reply.md", reply.text)
        call = LLMCall(
            agent=prompt.agent, model=reply.model, input_tokens=reply.usage.input_tokens,
            output_tokens=reply.usage.output_tokens, usage_reported=reply.usage.reported, cost_usd=reply.cost_usd,
            requests=reply.requests, seconds=reply.seconds,
        )
        data: dict[str, Any] = {"reply": reply.text, "retries": list(reply.retries)}
        if job.kind == "generation":
            parsed = self.generation.read(reply.text, label=job.label)
            if parsed.candidate is not None:
                self.run_dir.write_files(f"{artifact_dir}/candidate", parsed.candidate.files)
            data |= {"no_code": parsed.problem,
                     "candidate": to_json(parsed.candidate) if parsed.candidate is not None else None}
        else:
            recommendations = self.analysis.recommendations(reply.text)
            self.run_dir.write(f"{artifact_dir}/recommendations.md", recommendations)
            data["recommendations"] = recommendations
        return data | ({"tree": job.tree} if job.tree else {}), call

    @staticmethod
    def candidate_of(record: StepRecord) -> tuple[Candidate | None, str]:
        """A generation step's candidate, or why its reply held none."""
        stored = record.data["candidate"]
        return (record_from_json(Candidate, stored) if stored else None), record.data["no_code"]

    # ------------------------------------------------------------------------------------------ evaluation

    def evaluate(self, evaluator: Evaluator, candidate: Candidate, artifact_dir: str) -> dict[str, Any]:
        """Evaluate ``candidate`` on ``evaluator`` (in any thread): the evaluation step's data."""
        verdict = evaluator.evaluate(candidate)
        outcome = Outcome.from_verdict(verdict)
        self.run_dir.write(f"{artifact_dir}/verdict.json", json.dumps(verdict.to_json(), indent=2))
        if outcome.compile_log:
            self.run_dir.write(f"{artifact_dir}/compile.log", outcome.compile_log)
        return to_json(outcome)

    @staticmethod
    def attempt_of(place: Place, candidate: Candidate, record: StepRecord) -> Attempt:
        return Attempt(place, candidate, outcome=record_from_json(Outcome, record.data))

    # ------------------------------------------------------------------------------------ profile, analysis

    def profile(self, candidate: Candidate, place: Place) -> ProfileSummary | None:
        """Profile a correct candidate and summarize it; None when the backend's profiler gave nothing."""
        def work(artifact_dir: str) -> tuple[dict[str, Any], None]:
            self.stage("profiling", place)
            verdict = self.on_device(lambda: self.evaluator.evaluate(candidate, profile=True))
            self.run_dir.write(f"{artifact_dir}/verdict.json", json.dumps(verdict.to_json(), indent=2))
            if verdict.profile is None:
                why = verdict.message or "the backend returned no profile"
                return {"candidate_label": candidate.label, "summary": None, "why": why}, None
            self.stage("summarizing the profile", place)
            summary = self.on_device(lambda: self.evaluator.summarize(verdict.profile))
            self.run_dir.write(f"{artifact_dir}/summary.md", summary.text)
            images = [
                {"path": str(self.run_dir.copy_in(image.path, f"{artifact_dir}/{i}-{image.path.name}")
                             .relative_to(self.run_dir.path)), "caption": image.caption, "mime": image.mime}
                for i, image in enumerate(summary.images, start=1)
            ]
            return {"candidate_label": candidate.label, "summary": {"text": summary.text, "images": images}}, None

        step = self.journal.step("profile", candidate.digest, place, f"{place.label}-of-{candidate.label}", work)
        stored = step.data["summary"]
        if stored is None:
            return None
        images = tuple(Image(self.run_dir.path / i["path"], i["caption"], i["mime"]) for i in stored["images"])
        return ProfileSummary(text=stored["text"], images=images)
