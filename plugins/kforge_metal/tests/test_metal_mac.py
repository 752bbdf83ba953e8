"""The metal backend on Apple silicon, for real: the shipped example compiles and is correct, a shader error
comes back at the candidate's line, and a profile (with a Metal System Trace where Xcode is installed) summarises
into text and a picture. Marked ``mps``: ``make mac-test`` runs them; elsewhere they skip with the reason."""

from __future__ import annotations

import pytest

from kforge_core.app import App
from kforge_core.harness import Harness
from kforge_core.records import Candidate, Failure
from kforge_core.settings import HarnessSettings, Settings
from kforge_metal.backend import METAL
from kforge_metal.lowering import shipped_example

pytestmark = pytest.mark.mps


@pytest.fixture(scope="module")
def harness(tmp_path_factory):
    from kforge_core.problem import load_problem

    root = tmp_path_factory.mktemp("metal")
    problem_path = root / "rmsnorm.py"
    problem_path.write_text(shipped_example().problem.replace("tokens, hidden = 4096, 4096",
                                                              "tokens, hidden = 1024, 2048"))
    settings = Settings(harness=HarnessSettings(trials=2, warmup=1, repetitions=5, baselines=("eager",)))
    with Harness(backend=METAL, problem=load_problem(problem_path), settings=settings,
                 plugins=App().plugin_selection, scratch_root=root / "scratch") as harness:
        yield harness


def test_the_shipped_example_compiles_and_is_correct(harness):
    verdict = harness.evaluate(Candidate.from_source(shipped_example().solution, label="example"))
    assert verdict.correct, verdict.message
    assert "kernel rmsnorm: at most" in verdict.compile.log
    assert verdict.runtime is not None and verdict.runtime.median > 0


def test_a_shader_error_is_reported_at_the_candidates_line(harness):
    source = shipped_example().solution.replace("sum += dot(v, v);", "sum += dot(v, w);")
    verdict = harness.evaluate(Candidate.from_source(source, label="broken"))
    assert verdict.failure == Failure.COMPILE
    line = next(n for n, text in enumerate(source.splitlines(), 1) if "dot(v, w)" in text)
    assert f"model_new.py:{line} " in verdict.compile.log and "undeclared identifier 'w'" in verdict.compile.log


def test_the_profile_summarises_into_text_and_a_picture(harness):
    verdict = harness.evaluate(Candidate.from_source(shipped_example().solution, label="profiled"), profile=True)
    assert verdict.profile is not None and verdict.profile.tool == "metal"
    summary = harness.summarize(verdict.profile)
    assert "rmsnorm" in summary.text and "GB/s" in summary.text
    assert summary.images and summary.images[0].path.read_bytes()[:4] == b"\x89PNG"
