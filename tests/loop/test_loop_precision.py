"""A run's precision contract: stated in the prompts, recorded in the store, carried by listings, reports and the
plot, kept on resume; speedups under different contracts are never shown side by side without saying so."""

from __future__ import annotations

import dataclasses
import json
import sqlite3

import pytest
from click.testing import CliRunner
from loop_helpers import (PROBLEM, RecordingProgress, ScriptedEvaluator, code_reply, toy_app, toy_settings,
                          write_script)
from test_loop_flow import analysis, gen

from kforge_core.cli import cli
from kforge_core.errors import KForgeError
from kforge_core.loop.session import plan_run, resume_run, start_run
from kforge_core.report import RunReport
from kforge_core.report.plot import plot_title
from kforge_core.settings import HarnessSettings
from kforge_core.store import RunStore

ENTRIES = [gen(code_reply("ms=8.0")), analysis("1. use bfloat16 matmuls"), gen(code_reply("ms=4.0"))]


def start(tmp_path, precision: str, entries=ENTRIES, reference_run: str | None = None, **budget):
    script = write_script(tmp_path / f"{precision}.jsonl", entries)
    settings = toy_settings(tmp_path, script, optimization_rounds=1, **budget)
    settings = dataclasses.replace(settings, harness=HarnessSettings(precision=precision))
    with RunStore(settings.runs_dir) as store:
        plan = plan_run(settings, PROBLEM, store=store, reference_run=reference_run)
        return start_run(toy_app(), plan, store, RecordingProgress(), evaluator_factory=ScriptedEvaluator().factory())


def invoke(*args: str):
    return CliRunner().invoke(cli, list(args), obj=toy_app())


@pytest.fixture(scope="module")
def two_runs(tmp_path_factory):
    """One finished run under fp32 and one under bf16, in one runs directory."""
    tmp_path = tmp_path_factory.mktemp("contracts")
    return tmp_path, start(tmp_path, "fp32").run_id, start(tmp_path, "bf16").run_id


def test_the_store_records_each_runs_contract(two_runs):
    tmp_path, fp32_run, bf16_run = two_runs
    with RunStore(tmp_path / "runs") as store:
        assert (store.get_run(fp32_run).precision, store.get_run(bf16_run).precision) == ("fp32", "bf16")


def test_the_prompts_state_the_contract_and_only_a_mixed_one_lets_the_analyst_recommend_it(two_runs):
    tmp_path, fp32_run, bf16_run = two_runs

    def prompt(run_id: str, kind: str) -> str:
        with RunStore(tmp_path / "runs") as store:
            step = next(s for s in store.steps(run_id) if s.kind == kind)
        return (tmp_path / "runs" / run_id / step.artifact_dir / "prompt.md").read_text()

    assert "## Precision contract: fp32" in prompt(fp32_run, "generation")
    assert "float32 outputs: |candidate - reference| <= 0.0001 + 0.0001 * |reference|" in prompt(fp32_run, "generation")
    assert "## Precision contract: bf16" in prompt(bf16_run, "generation")
    assert "Mixed precision is allowed" in prompt(bf16_run, "generation")
    assert "float32 outputs: |candidate - reference| <= 0.02 + 0.02 * |reference|" in prompt(bf16_run, "generation")
    assert "never recommend TF32, float16, bfloat16" in prompt(fp32_run, "analysis")
    assert "you may recommend narrower arithmetic" in prompt(bf16_run, "analysis")
    assert "under the bf16 precision contract" in prompt(bf16_run, "analysis")


def test_listings_carry_the_contract_and_say_when_they_mix_contracts(two_runs):
    tmp_path, fp32_run, bf16_run = two_runs
    rows = json.loads(invoke("runs", "--runs-dir", str(tmp_path / "runs"), "--json").output)
    assert {row["id"]: row["precision"] for row in rows} == {fp32_run: "fp32", bf16_run: "bf16"}
    text = " ".join(invoke("runs", "--runs-dir", str(tmp_path / "runs")).output.split())
    assert "different precision contracts (fp32: 1, bf16: 1); compare speedups only within one contract" in text
    shown = json.loads(invoke("show", bf16_run, "--runs-dir", str(tmp_path / "runs"), "--json").output)
    assert shown["precision"]["contract"] == "bf16" and shown["best"]["precision_bits"] == 21.5
    assert all(a["precision_bits"] == 21.5 for a in shown["attempts"])
    printed = " ".join(invoke("show", bf16_run, "--runs-dir", str(tmp_path / "runs")).output.split())
    assert "precision contract: bf16: may compute in float32, TF32, float16 and bfloat16" in printed
    assert "(bf16 contract, 21.5 bits)" in printed


def test_the_report_and_the_plot_title_say_the_contract_and_the_precision_reached(two_runs):
    tmp_path, fp32_run, bf16_run = two_runs
    report = (tmp_path / "runs" / bf16_run / "report.md").read_text()
    assert ("| precision contract | bf16: may compute in float32, TF32, float16 and bfloat16; float32 outputs within "
            "atol=0.02, rtol=0.02 |") in report
    assert "Precision: agrees with a float64 reference to 21.5 bits, under the bf16 precision contract." in report
    assert "compare them only with figures measured under bf16" in report
    assert "| vs eager | vs compile | of SOL | bits | flags | files |" in report
    assert "measured under fp32" not in (tmp_path / "runs" / fp32_run / "report.md").read_text()
    with RunStore(tmp_path / "runs") as store:
        title = plot_title(RunReport.from_store(store, bf16_run))
    assert title.endswith("bf16 precision contract; the best agrees with float64 to 21.5 bits")


def test_a_run_resumes_only_under_the_contract_it_started_with(tmp_path):
    run_id = start(tmp_path, "fp32", max_llm_calls=1).run_id  # stops early, resumable
    with RunStore(tmp_path / "runs") as store:
        with pytest.raises(KForgeError, match="started under the fp32 precision contract; --resume continues it "
                                              "under that contract, not bf16"):
            resume_run(toy_app(), store, run_id, RecordingProgress(), precision="bf16",
                       evaluator_factory=ScriptedEvaluator().factory())
    result = invoke("run", "--resume", run_id, "--runs-dir", str(tmp_path / "runs"), "--precision", "bf16")
    assert result.exit_code == 1 and "started under the fp32 precision contract" in result.output
    progress = RecordingProgress()
    with RunStore(tmp_path / "runs") as store:
        resume_run(toy_app(), store, run_id, progress, precision="fp32", budget={"max_llm_calls": 10},
                   evaluator_factory=ScriptedEvaluator().factory())
    assert any("stays under the fp32 precision contract it started with" in event for event in progress.events)


def test_a_reference_from_a_run_under_another_contract_says_so(two_runs):
    tmp_path, fp32_run, bf16_run = two_runs
    settings = toy_settings(tmp_path, tmp_path / "fp32.jsonl")
    with RunStore(settings.runs_dir) as store:
        reference = plan_run(settings, PROBLEM, store=store, reference_run=bf16_run).reference
        same = plan_run(settings, PROBLEM, store=store, reference_run=fp32_run).reference
    assert reference.label.endswith("bf16 contract)")
    assert "held to the bf16 precision contract" in reference.note and "this run's contract is fp32" in reference.note
    assert "precision contract" not in same.note


def test_a_store_from_before_contracts_gets_the_column_with_fp32(tmp_path):
    with RunStore(tmp_path) as store:
        store.create_run("old", problem_name="p", problem_path="/p.py", problem_digest="d", backend="cpu",
                         model="m", analyst_model="m", config={}, precision="bf16")
    conn = sqlite3.connect(tmp_path / "kforge.db")
    conn.execute("ALTER TABLE runs DROP COLUMN precision")  # as a database written before it existed
    conn.commit()
    conn.close()
    with RunStore(tmp_path) as store:
        assert store.get_run("old").precision == "fp32"
