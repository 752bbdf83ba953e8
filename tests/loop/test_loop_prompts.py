"""The shipped prompt templates, and a user's own copies through prompts_dir."""

from __future__ import annotations

import pytest
from loop_helpers import PROBLEM

from kforge_core.agents import AnalysisAgent, AnalysisRequest, CandidateView, Feedback, GenerationAgent, \
    GenerationRequest, PrecisionTerms, Reference
from kforge_core.precision_contract import CONTRACTS
from kforge_core.errors import KForgeError
from kforge_core.problem import load_problem
from kforge_core.prompts import PromptTemplates
from kforge_core.records import Example, Image, Lowering, ProfileSummary, SourceFile

LOWERING = Lowering(backend="cpu", programming_model="Numba njit(parallel=True) kernels on NumPy views.",
                    hardware="2 cores, AVX2", example=Example(problem="EXAMPLE PROBLEM", solution="EXAMPLE SOLUTION"))
FP32 = PrecisionTerms(CONTRACTS["fp32"], (("float32", 1e-4, 1e-4),))
BF16 = PrecisionTerms(CONTRACTS["bf16"], (("float32", 2e-2, 2e-2),))
BEST = CandidateView("f3", (SourceFile("model_new.py", "class ModelNew: 'fast'"),), "model_new.py", 4.2,
                     (("eager", 2.0), ("compile", 1.5)))


def generation(problem, templates=None, reference=None, precision=FP32) -> GenerationAgent:
    return GenerationAgent(templates or PromptTemplates(), problem, LOWERING, reference, precision=precision)


@pytest.fixture(scope="module")
def problem():
    return load_problem(PROBLEM)


def test_the_first_generation_prompt_has_problem_lowering_and_example(problem):
    prompt = generation(problem).prompt(GenerationRequest("functional", 0, 1))
    assert "generation agent" in prompt.system
    for text in ("torch.nn.functional.gelu(x)", "Numba njit(parallel=True)", "2 cores, AVX2", "EXAMPLE PROBLEM",
                 "EXAMPLE SOLUTION", "tensor[2048, 4096] float32", "one fenced ```python block"):
        assert text in prompt.user
    assert "What happened to your last attempt" not in prompt.user and not prompt.images


def test_later_prompts_carry_the_feedback_the_best_candidate_and_recommendations(problem):
    feedback = Feedback("compile", "f2", "It did not compile (compile_error).", "", "TypingError: no erf(array)",
                        (SourceFile("model_new.py", "BROKEN CODE"),), "model_new.py")
    request = GenerationRequest("optimization", 2, 1, feedback, BEST, "1. tile by rows")
    reference = Reference("kernel.cu", "Works on CUDA.", (SourceFile("kernel.cu", "__global__ void k()"),), "kernel.cu")
    user = generation(problem, reference=reference).prompt(request).user
    for text in ("optimization round 2", "TypingError: no erf(array)", "BROKEN CODE", "Current best implementation "
                 "(f3: 4.200 ms, 2.00x vs eager, 1.50x vs compile)", "class ModelNew: 'fast'", "1. tile by rows",
                 "__global__ void k()", "Works on CUDA."):
        assert text in user


def test_a_reply_without_code_is_fed_back(problem):
    feedback = Feedback("no_code", "f1", "Your reply contained no usable code.", "the reply was empty.")
    user = generation(problem).prompt(GenerationRequest("functional", 0, 2, feedback)).user
    assert "Your reply contained no usable code: the reply was empty." in user


def test_the_analysis_prompt_has_timings_profile_and_images(problem, png):
    summary = ProfileSummary(text="k0: 92% of DRAM bandwidth", images=(Image(png, caption="roofline"),))
    request = AnalysisRequest(1, BEST, (("eager", 8.4), ("compile", 6.3)), summary)
    prompt = AnalysisAgent(PromptTemplates(), problem, LOWERING, precision=FP32).prompt(request)
    for text in ("k0: 92% of DRAM bandwidth", "PyTorch eager: 8.400 ms (speedup 2.00x)", "f3: 4.200 ms",
                 "Attached image 1: roofline", "class ModelNew: 'fast'"):
        assert text in prompt.user
    assert prompt.images == summary.images
    (system, user) = prompt.messages()
    assert [type(b).__name__ for b in user.blocks] == ["TextBlock", "ImageBlock"]


def test_the_analysis_prompt_carries_the_launch_overhead_finding(problem):
    from dataclasses import replace

    from kforge_core.store.attempts import Attempt, Outcome, Place
    from kforge_core.records import Candidate

    outcome = Outcome("f3", "d", True, True, None, "", runtime_ms=0.1, timer="wall",
                      figures_ms=(("wall", 0.1), ("events", 0.04), ("device", 0.028)))
    view = Attempt(Place("functional", 0, 3), Candidate.from_source("class ModelNew: 'fast'"), outcome=outcome).view()
    request = AnalysisRequest(1, replace(BEST, timer=view.timer, findings=view.findings), (("eager", 8.4),), None)
    user = AnalysisAgent(PromptTemplates(), problem, LOWERING, precision=FP32).prompt(request).user
    assert "## Timings (median of the timed runs, wall time)" in user
    assert "- 72% of this candidate's wall time is host launch overhead (wall 0.1 ms per call, device time 0.028 ms)" \
        in user


def test_prompts_dir_overrides_templates_one_by_one(problem, tmp_path):
    (tmp_path / "generation.j2").write_text("Solve {{ problem.name }} for {{ lowering.backend }}.")
    prompt = generation(problem, PromptTemplates(tmp_path)).prompt(GenerationRequest("functional", 0, 1))
    assert prompt.user == "Solve elementwise_gelu_scale for cpu.\n"
    assert "generation agent" in prompt.system  # still the shipped one


def test_a_broken_user_template_is_a_clear_error(problem, tmp_path):
    (tmp_path / "generation.j2").write_text("{{ problme.name }}")
    with pytest.raises(KForgeError, match="prompt template generation.j2.*problme"):
        generation(problem, PromptTemplates(tmp_path)).prompt(GenerationRequest("functional", 0, 1))
    with pytest.raises(KForgeError, match="is not a directory"):
        PromptTemplates(tmp_path / "missing")


def test_the_analysis_prompt_names_the_statistic_of_its_timings(problem):
    """On the host CPU a runtime is the fastest timed run; the analyst is told which figure it reads."""
    from dataclasses import replace

    agent = AnalysisAgent(PromptTemplates(), problem, LOWERING, precision=FP32)
    for statistic, words in (("min", "## Timings (fastest of the timed runs, wall time)"),
                             ("median", "## Timings (median of the timed runs, wall time)")):
        request = AnalysisRequest(1, replace(BEST, statistic=statistic), (("eager", 8.4),), None)
        assert words in agent.prompt(request).user
