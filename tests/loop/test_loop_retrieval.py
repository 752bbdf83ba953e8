"""Retrieved references in runs: finished runs fill the kernel index, a later run on a related problem is shown
the right kernels (same backend first, other backends as cross-platform references), its journal and report say
which; ``references = "none"`` and a damaged index (toy backend, scripted verdicts: no harness)."""

from __future__ import annotations

import dataclasses
import shutil
from pathlib import Path

import pytest
from click.testing import CliRunner
from loop_helpers import EXAMPLES, RecordingProgress, ScriptedEvaluator, code_reply, toy_app, toy_settings, write_script

from kforge_core.cli import cli
from kforge_core.errors import KForgeError
from kforge_core.loop.session import plan_run, start_run
from kforge_core.retrieval import KernelIndexStore, add_folder, index_path
from kforge_core.settings import RetrievalSettings
from kforge_core.store import RunStore

PROBLEMS = EXAMPLES / "problems"
RELATED = '''import torch
import torch.nn as nn


class Model(nn.Module):
    """A smaller linear layer and GELU: the operators of gemm_bias_gelu, other shapes."""

    def __init__(self, n: int):
        super().__init__()
        self.fc = nn.Linear(n, n)

    def forward(self, x):
        return torch.nn.functional.gelu(self.fc(x))


def get_inputs():
    return [torch.randn(64, 256)]


def get_init_inputs():
    return [256]
'''


def gen(reply: str, **extra) -> dict:
    return {"agent": "generation", "reply": reply, "usage": {"input_tokens": 10, "output_tokens": 5}, **extra}


def run_problem(tmp_path: Path, problem: Path, name: str, replies: list[dict], references: str = "auto"):
    settings = toy_settings(tmp_path, write_script(tmp_path / f"{name}.jsonl", replies), optimization_rounds=0)
    settings = dataclasses.replace(settings, retrieval=RetrievalSettings(references=references))
    progress = RecordingProgress()
    with RunStore(settings.runs_dir) as store:
        plan = plan_run(settings, problem, store=store)
        result = start_run(toy_app(), plan, store, progress, evaluator_factory=ScriptedEvaluator().factory())
    return result, progress


def first_prompt(result) -> str:
    report = result.outputs.report
    return (report.run_dir / report.attempts[0].step_dir / "prompt.md").read_text()


@pytest.fixture(scope="module")
def filled_once(tmp_path_factory) -> Path:
    """A runs directory with two finished runs (a GEMM+GELU and a logsumexp) and a folder of solutions for
    another backend, made once for the module."""
    tmp_path = tmp_path_factory.mktemp("filled")
    run_problem(tmp_path, PROBLEMS / "gemm_bias_gelu.py", "gemm", [gen(code_reply("ms=2.0", "# the gemm kernel\n"))])
    run_problem(tmp_path, PROBLEMS / "reduction_logsumexp.py", "lse", [gen(code_reply("ms=1.0", "# the lse kernel\n"))])
    solutions = tmp_path / "published"
    solutions.mkdir()
    (solutions / "layernorm.py").write_text("class ModelNew:  # the published layernorm kernel\n    pass\n")
    add_folder(tmp_path / "runs", solutions, "metal", PROBLEMS)
    return tmp_path


@pytest.fixture
def filled(filled_once, tmp_path) -> Path:
    """A copy of that runs directory (and solutions folder) in ``tmp_path``; returns the related problem's file."""
    for name in ("runs", "published"):
        shutil.copytree(filled_once / name, tmp_path / name)
    related = tmp_path / "linear_gelu_small.py"
    related.write_text(RELATED)
    return related


def test_finished_runs_fill_the_index(filled, tmp_path):
    with KernelIndexStore(tmp_path / "runs") as index:
        kernels = {k.problem.name: k for k in index.kernels()}
    assert set(kernels) == {"gemm_bias_gelu", "reduction_logsumexp", "layernorm"}
    gemm = kernels["gemm_bias_gelu"]
    assert (gemm.backend, gemm.verdict, gemm.precision, gemm.runtime_ms) == ("toy", "correct", "fp32", 2.0)
    assert "linear" in gemm.problem.operators and "gelu" in gemm.problem.operators
    assert gemm.problem.inputs == ("float32[1024, 1024]",)  # traced on the meta device
    assert "the gemm kernel" in gemm.files[0].text
    assert kernels["layernorm"].backend == "metal" and kernels["layernorm"].verdict == "published"


def test_a_related_problem_is_shown_the_right_kernel_and_the_run_records_it(filled, tmp_path):
    result, progress = run_problem(tmp_path, filled, "related", [
        gen(code_reply("ms=1.5"), expect={"contains": [
            "Kernels that worked before", "Reference 1: gemm_bias_gelu on toy", "the gemm kernel", "linear, gelu"]}),
    ])
    report = result.outputs.report
    assert [r.problem for r in report.references][0] == "gemm_bias_gelu"
    prompt = first_prompt(result)
    assert "the gemm kernel" in prompt and "the lse kernel" not in prompt  # the unrelated logsumexp is left out
    assert not report.references[0].warm_start
    assert any(e.startswith("reference: gemm_bias_gelu on toy") for e in progress.events)
    assert "## Retrieved references" in result.outputs.report_path.read_text()
    with RunStore(tmp_path / "runs") as store:
        steps = [s for s in store.steps(result.run_id) if s.kind == "references"]
    assert steps and steps[0].data["references"][0]["problem"] == "gemm_bias_gelu"


def test_the_same_problem_on_the_same_backend_is_a_warm_start(filled, tmp_path):
    result, _ = run_problem(tmp_path, PROBLEMS / "gemm_bias_gelu.py", "again", [
        gen(code_reply("ms=1.5"), expect={"contains": ["Warm start: gemm_bias_gelu on toy", "a warm start"]}),
    ])
    assert result.outputs.report.references[0].warm_start


def test_another_backends_kernel_is_a_cross_platform_reference(filled, tmp_path):
    result, _ = run_problem(tmp_path, PROBLEMS / "layernorm.py", "ln", [
        gen(code_reply("ms=1.5"), expect={"contains": [
            "Reference 1: layernorm on metal", "cross-platform reference", "the published layernorm kernel"]}),
    ])
    assert [(r.backend, r.warm_start) for r in result.outputs.report.references][0] == ("metal", False)


def test_references_none_shows_nothing(filled, tmp_path):
    result, _ = run_problem(tmp_path, filled, "none", [gen(code_reply("ms=1.5"))], references="none")
    assert result.outputs.report.references == ()
    assert "Kernels that worked before" not in first_prompt(result)


def test_a_damaged_or_empty_index_is_a_clear_error(tmp_path):
    runs = tmp_path / "runs"
    runner = CliRunner()
    empty = runner.invoke(cli, ["search", "conv3d", "--runs-dir", str(runs)])
    assert empty.exit_code == 1 and "no kernel index" in empty.output and "Traceback" not in empty.output
    built = runner.invoke(cli, ["index", "--runs-dir", str(runs)])
    assert built.exit_code == 0 and "holds 0 kernels" in built.output, built.output
    none = runner.invoke(cli, ["search", "conv3d", "--runs-dir", str(runs)])
    assert none.exit_code == 0 and "no kernel of the 0" in none.output
    index_path(runs).write_bytes(b"this is not a database" * 100)
    damaged = runner.invoke(cli, ["search", "conv3d", "--runs-dir", str(runs)])
    assert damaged.exit_code == 1 and "is damaged" in damaged.output and "Traceback" not in damaged.output
    settings = toy_settings(tmp_path, write_script(tmp_path / "s.jsonl", []))
    with RunStore(runs) as store, pytest.raises(KForgeError, match="is damaged"):
        plan_run(settings, PROBLEMS / "layernorm.py", store=store)


def test_the_retrieval_demo_script_is_what_its_generator_writes():
    import importlib.util
    import sys

    sys.path.insert(0, str(EXAMPLES / "replay"))
    try:
        spec = importlib.util.spec_from_file_location("make_retrieval_demo",
                                                      EXAMPLES / "replay" / "make_retrieval_demo.py")
        module = importlib.util.module_from_spec(spec)
        spec.loader.exec_module(module)
    finally:
        sys.path.remove(str(EXAMPLES / "replay"))
    assert module.TARGET.read_text() == "\n".join(module.script_lines(module.SCRIPT, module.REPLIES)) + "\n", (
        "run: python examples/replay/make_retrieval_demo.py")


def test_kforge_index_rebuilds_from_the_runs_and_adds_a_folder_and_search_lists_it(filled, tmp_path):
    import json

    runs, runner = tmp_path / "runs", CliRunner()
    index_path(runs).unlink()
    missing = runner.invoke(cli, ["index", "--runs-dir", str(runs), "--extra", str(tmp_path / "published")])
    assert missing.exit_code == 1 and "--extra needs --extra-backend" in missing.output
    built = runner.invoke(cli, ["index", "--runs-dir", str(runs), "--extra", str(tmp_path / "published"),
                                "--extra-backend", "metal", "--problems", str(PROBLEMS)])
    assert built.exit_code == 0, built.output
    assert "runs: 2 kernels indexed" in built.output and "1 metal kernel indexed" in built.output
    found = runner.invoke(cli, ["search", "layer_norm", "--runs-dir", str(runs), "--json"])
    rows = json.loads(found.output)
    assert [(r["problem"], r["backend"], r["verdict"]) for r in rows] == [("layernorm", "metal", "published")]
    assert rows[0]["score"] > 0
    listed = runner.invoke(cli, ["search", "gelu matmul", "--runs-dir", str(runs), "--backend", "toy"])
    assert listed.exit_code == 0 and "gemm_bias_gelu" in listed.output and "logsumexp" not in listed.output


def test_kforge_run_stops_on_a_damaged_index_unless_references_none(tmp_path):
    runs = tmp_path / "runs"
    runs.mkdir()
    index_path(runs).write_bytes(b"this is not a database" * 100)
    args = ["run", str(PROBLEMS / "layernorm.py"), "--backend", "toy", "--llm", "replay:missing.jsonl",
            "--runs-dir", str(runs)]
    damaged = CliRunner().invoke(cli, args, obj=toy_app())
    assert damaged.exit_code == 1 and "is damaged" in damaged.output and "Traceback" not in damaged.output
    without = CliRunner().invoke(cli, [*args, "--references", "none"], obj=toy_app())
    assert without.exit_code == 1 and "replay script not found" in without.output  # got past the index
