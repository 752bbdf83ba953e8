"""The steps of a run, each done once, persisted through the journal, and replayed on resume:
baselines -> generation -> evaluation -> (profile -> analysis -> generation -> evaluation)...
"""

from __future__ import annotations

import json
from dataclasses import dataclass
from typing import Any, Callable

from ..agents import AnalysisAgent, AnalysisRequest, GenerationAgent, GenerationRequest, Prompt
from ..codec import record_from_json, to_json
from ..harness.verdict import RuntimeStats
from ..llm import ChatClient, LLMReply
from ..records import Candidate, Image, ProfileSummary
from ..store import LLMCall, RunDirectory
from ..store.attempts import Attempt, Outcome, Place
from .budget import Budget
from .evaluator import Evaluator
from .journal import Journal

Stage = Callable[[str, Place], None]  # the loop's way of saying what it is doing now


@dataclass
class LoopSteps:
    journal: Journal
    run_dir: RunDirectory
    generation: GenerationAgent
    analysis: AnalysisAgent
    generation_client: ChatClient
    analysis_client: ChatClient
    evaluator: Evaluator
    budget: Budget
    stage: Stage = lambda stage, place: None

    def baselines(self) -> tuple[tuple[str, float], ...]:
        """The baselines' runtimes (ms; each ``RuntimeStats.figure``), measured once by the harness before the first
        candidate."""
        def work(artifact_dir: str) -> tuple[dict[str, Any], None]:
            self.stage("measuring baselines", Place("setup"))
            stats = [[name, to_json(value)] for name, value in self.evaluator.baselines().items()]
            self.run_dir.write(f"{artifact_dir}/baselines.json", json.dumps(dict(stats), indent=2))
            return {"baselines": stats}, None

        step = self.journal.step("baselines", "baselines", Place("setup"), "baselines", work)
        return tuple((name, RuntimeStats.from_json(stats).figure) for name, stats in step.data["baselines"])

    def attempt(self, request: GenerationRequest, place: Place) -> Attempt:
        """Ask the generation agent for a candidate and, if the reply holds one, evaluate it."""
        candidate, no_code = self._generate(request, place)
        if candidate is None:
            return Attempt(place, None, no_code=no_code)
        return Attempt(place, candidate, outcome=self._evaluate(candidate, place))

    def _generate(self, request: GenerationRequest, place: Place) -> tuple[Candidate | None, str]:
        prompt = self.generation.prompt(request)

        def work(artifact_dir: str) -> tuple[dict[str, Any], LLMCall]:
            reply, call = self._ask(self.generation_client, prompt, place, "generating", artifact_dir)
            parsed = self.generation.read(reply.text, label=place.label)
            if parsed.candidate is not None:
                self.run_dir.write_files(f"{artifact_dir}/candidate", parsed.candidate.files)
            data = {"reply": reply.text, "retries": list(reply.retries), "no_code": parsed.problem,
                    "candidate": to_json(parsed.candidate) if parsed.candidate is not None else None}
            return data, call

        step = self.journal.step("generation", prompt.digest, place, place.label, work)
        self.budget.charge(step.llm_call)
        stored = step.data["candidate"]
        return (record_from_json(Candidate, stored) if stored else None), step.data["no_code"]

    def _evaluate(self, candidate: Candidate, place: Place) -> Outcome:
        def work(artifact_dir: str) -> tuple[dict[str, Any], None]:
            self.stage("evaluating", place)
            verdict = self.evaluator.evaluate(candidate)
            outcome = Outcome.from_verdict(verdict)
            self.run_dir.write(f"{artifact_dir}/verdict.json", json.dumps(verdict.to_json(), indent=2))
            if outcome.compile_log:
                self.run_dir.write(f"{artifact_dir}/compile.log", outcome.compile_log)
            return to_json(outcome), None

        step = self.journal.step("evaluation", candidate.digest, place, place.label, work)
        return record_from_json(Outcome, step.data)

    def profile(self, candidate: Candidate, place: Place) -> ProfileSummary | None:
        """Profile a correct candidate and summarize it; None when the backend's profiler gave nothing."""
        def work(artifact_dir: str) -> tuple[dict[str, Any], None]:
            self.stage("profiling", place)
            verdict = self.evaluator.evaluate(candidate, profile=True)
            self.run_dir.write(f"{artifact_dir}/verdict.json", json.dumps(verdict.to_json(), indent=2))
            if verdict.profile is None:
                why = verdict.message or "the backend returned no profile"
                return {"candidate_label": candidate.label, "summary": None, "why": why}, None
            self.stage("summarizing the profile", place)
            summary = self.evaluator.summarize(verdict.profile)
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

    def analyze(self, request: AnalysisRequest, place: Place) -> str:
        """The analyst's recommendations for the best candidate."""
        prompt = self.analysis.prompt(request)

        def work(artifact_dir: str) -> tuple[dict[str, Any], LLMCall]:
            reply, call = self._ask(self.analysis_client, prompt, place, "analysing", artifact_dir)
            recommendations = self.analysis.recommendations(reply.text)
            self.run_dir.write(f"{artifact_dir}/recommendations.md", recommendations)
            return {"reply": reply.text, "retries": list(reply.retries), "recommendations": recommendations}, call

        step = self.journal.step("analysis", prompt.digest, place, place.label, work)
        self.budget.charge(step.llm_call)
        return step.data["recommendations"]

    def _ask(
        self, client: ChatClient, prompt: Prompt, place: Place, stage: str, artifact_dir: str
    ) -> tuple[LLMReply, LLMCall]:
        self.budget.check()
        self.stage(stage, place)
        self.run_dir.write(f"{artifact_dir}/prompt.md", prompt.as_markdown())
        for i, image in enumerate(prompt.images, start=1):
            self.run_dir.copy_in(image.path, f"{artifact_dir}/prompt-image-{i}{image.path.suffix}")
        reply = client.ask(prompt.messages(), may_retry=self.budget.may_retry)
        self.run_dir.write(f"{artifact_dir}/reply.md", reply.text)
        call = LLMCall(
            agent=prompt.agent, model=reply.model, input_tokens=reply.usage.input_tokens,
            output_tokens=reply.usage.output_tokens, usage_reported=reply.usage.reported, cost_usd=reply.cost_usd,
            requests=reply.requests, seconds=reply.seconds,
        )
        return reply, call
