"""The generation agent: writes a candidate from the problem, the backend's lowering and the feedback so far."""

from __future__ import annotations

from dataclasses import dataclass

from ..candidate_module import DEFAULT_CLASS
from ..prompts import PromptTemplates
from ..records import Lowering, Problem, SourceFile
from ..shapes.words import prompt_words
from .prompt import Prompt
from .reply_parser import ParsedReply, parse_reply
from .views import CandidateView, Feedback, PrecisionTerms


@dataclass(frozen=True)
class Reference:
    """A working kernel for the same problem (``--reference FILE`` or ``--reference-run RUN_ID``)."""

    label: str
    note: str
    files: tuple[SourceFile, ...]
    entry: str


@dataclass(frozen=True)
class RetrievedReference:
    """A kernel retrieved from the kernel index (``kforge_core.retrieval``), as the prompt shows it.

    :param warm_start: the same problem on the same backend: a kernel to start from, not a hint.
    :param why: why it was chosen, in one sentence.
    :param figures: what is known of it (backend, speedup, time, contract).
    """

    key: str
    problem_name: str
    backend: str
    score: float
    warm_start: bool
    why: str
    figures: str
    files: tuple[SourceFile, ...]
    entry: str

    @property
    def label(self) -> str:
        return f"{self.problem_name} on {self.backend}"

    def summary(self) -> dict[str, object]:
        """What the journal and the report keep of it (not the code)."""
        return {"key": self.key, "problem": self.problem_name, "backend": self.backend, "score": round(self.score, 4),
                "warm_start": self.warm_start, "why": self.why, "figures": self.figures}


@dataclass(frozen=True)
class GenerationRequest:
    """One attempt: in a functional pass, feedback on the last attempt; in an optimization round, also the best
    candidate (or, with ``--keep``, the parent this candidate improves) and the analyst's recommendations.
    ``variant``: where a round asks for several candidates at once, what sets this one apart (which recommendation
    it follows, which approach it takes), so that the round's candidates differ by construction."""

    pass_kind: str  # "functional" or "optimization"
    round: int  # 0 in the functional pass
    attempt: int
    feedback: Feedback | None = None
    best: CandidateView | None = None
    recommendations: str | None = None
    variant: str | None = None


class GenerationAgent:
    def __init__(
        self, templates: PromptTemplates, problem: Problem, lowering: Lowering, reference: Reference | None = None,
        *, precision: PrecisionTerms, candidate_class: str = DEFAULT_CLASS,
        references: tuple[RetrievedReference, ...] = (), check_shapes: bool = True,
    ) -> None:
        self.templates = templates
        self.problem = problem
        self.lowering = lowering
        self.reference = reference
        self.precision = precision
        self.candidate_class = candidate_class  # the class the candidate defines (harness.candidate_class)
        self.references = references  # kernels retrieved from the index (warm starts and related problems)
        # the shape variants the kernel is checked at, said in the prompt ("" where harness.shapes is off)
        self.shapes = prompt_words(problem.shapes) if check_shapes else ""

    def prompt(self, request: GenerationRequest) -> Prompt:
        context = dict(
            problem=self.problem, lowering=self.lowering, reference=self.reference, precision=self.precision,
            pass_kind=request.pass_kind, round=request.round, attempt=request.attempt, feedback=request.feedback,
            best=request.best, recommendations=request.recommendations, candidate_class=self.candidate_class,
            variant=request.variant,
            references=self.references, shapes=self.shapes,
        )
        return Prompt(
            agent="generation",
            system=self.templates.render("generation_system.j2", **context),
            user=self.templates.render("generation.j2", **context),
        )

    def read(self, reply: str, *, label: str) -> ParsedReply:
        return parse_reply(reply, label=label, class_name=self.candidate_class)
