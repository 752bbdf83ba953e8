"""The performance-analysis agent: turns a profile summary of the best candidate into recommendations."""

from __future__ import annotations

from dataclasses import dataclass

from ..prompts import PromptTemplates
from ..records import Image, Lowering, Problem, ProfileSummary
from .prompt import Prompt
from .views import CandidateView, PrecisionTerms


@dataclass(frozen=True)
class RoundNote:
    """What an earlier optimization round tried and what came of it, so the analyst does not repeat itself."""

    round: int
    outcome: str


@dataclass(frozen=True)
class AnalysisRequest:
    round: int
    best: CandidateView
    baselines: tuple[tuple[str, float], ...]  # name -> runtime ms (RuntimeStats.figure)
    summary: ProfileSummary | None
    history: tuple[RoundNote, ...] = ()


class AnalysisAgent:
    """Asks for recommendations; ``user_images`` (profiler screenshots the user gave) go with every prompt, after
    the profile summary's own images."""

    def __init__(self, templates: PromptTemplates, problem: Problem, lowering: Lowering,
                 user_images: tuple[Image, ...] = (), *, precision: PrecisionTerms) -> None:
        self.templates = templates
        self.problem = problem
        self.lowering = lowering
        self.user_images = user_images
        self.precision = precision

    def prompt(self, request: AnalysisRequest) -> Prompt:
        profile_images = request.summary.images if request.summary is not None else ()
        context = dict(
            problem=self.problem, lowering=self.lowering, precision=self.precision, round=request.round,
            best=request.best,
            baselines=request.baselines, summary=request.summary, history=request.history,
            user_images=self.user_images, first_user_image=len(profile_images) + 1,
        )
        return Prompt(
            agent="analysis",
            system=self.templates.render("analysis_system.j2", **context),
            user=self.templates.render("analysis.j2", **context),
            images=(*profile_images, *self.user_images),
        )

    @staticmethod
    def recommendations(reply: str) -> str:
        """The reply is the recommendations; an empty one still lets the generation agent try on its own."""
        return reply.strip() or "(The analyst gave no recommendations; find the bottleneck yourself.)"
