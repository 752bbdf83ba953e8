"""`kforge run` argument errors, and `kforge runs` / `kforge show` on a stored run."""

from __future__ import annotations

import json

import pytest
from click.testing import CliRunner
from loop_helpers import PROBLEM, ScriptedEvaluator, code_reply, run_toy, toy_app, write_script
from test_loop_flow import analysis, gen

from kforge_core.cli import cli


def invoke(*args: str, env=None):
    return CliRunner().invoke(cli, list(args), obj=toy_app(), env=env)


@pytest.fixture(scope="module")
def stored_run(tmp_path_factory):
    tmp_path = tmp_path_factory.mktemp("stored")
    script = write_script(tmp_path / "s.jsonl", [
        gen("thinking..."), gen(code_reply("ms=8.0")), analysis("1. split rows across threads"),
        gen(code_reply("ms=4.0")),
    ])
    result, _ = run_toy(tmp_path, script, ScriptedEvaluator(), optimization_rounds=1)
    return tmp_path / "runs", result.run_id


@pytest.mark.parametrize("args, message", [
    ((), "give a PROBLEM file to start a run, or --resume RUN_ID"),
    ((str(PROBLEM), "--backend", "toy"), "no model chosen"),
    (("--resume", "x", str(PROBLEM)), "--resume continues a run as it was started"),
    ((str(PROBLEM), "--backend", "nope", "--llm", "replay:x.jsonl"), "unknown backend 'nope'"),
    ((str(PROBLEM), "--backend", "toy", "--llm", "replay:missing.jsonl"), "replay script not found"),
    (("no_such_problem.py", "--backend", "toy", "--llm", "replay:missing.jsonl"), "replay script not found"),
])
def test_run_argument_errors_are_clean(tmp_path, args, message):
    result = invoke("run", *args, "--runs-dir", str(tmp_path / "runs"))
    assert result.exit_code == 1 and message in result.output


def test_a_missing_key_is_reported_before_any_run_is_created(tmp_path):
    result = invoke("run", str(PROBLEM), "--backend", "toy", "--llm", "openai:gpt-4.1", "--runs-dir",
                    str(tmp_path / "runs"), env={"OPENAI_API_KEY": ""})
    assert result.exit_code == 1 and "OPENAI_API_KEY is not set" in result.output
    assert "Traceback" not in result.output
    assert invoke("runs", "--runs-dir", str(tmp_path / "runs"), "--json").output.strip() == "[]"


def test_runs_lists_the_run(stored_run):
    runs_dir, run_id = stored_run
    (row,) = json.loads(invoke("runs", "--runs-dir", str(runs_dir), "--json").output)
    assert (row["id"], row["status"], row["backend"], row["best"]) == (run_id, "finished", "toy", "o1.1")
    assert row["best_speedup"] == pytest.approx(2.0)
    table = invoke("runs", "--runs-dir", str(runs_dir)).output
    assert run_id[:20] in table and "finished" in table


def test_show_prints_attempts_recommendations_and_files(stored_run):
    runs_dir, run_id = stored_run
    text = invoke("show", run_id, "--runs-dir", str(runs_dir)).output
    for part in ("no code", "correct", "(best)", "1. split rows across threads", "best.py", "report.md"):
        assert part in text
    data = json.loads(invoke("show", run_id, "--runs-dir", str(runs_dir), "--json").output)
    assert [a["verdict"] for a in data["attempts"]] == ["no code", "correct", "correct"]
    assert data["best"]["label"] == "o1.1" and data["best"]["speedups"] == {"eager": 2.5, "compile": 2.0}
    assert data["rounds"][0]["recommendations"] == "1. split rows across threads"
    assert invoke("show", "nope", "--runs-dir", str(runs_dir)).exit_code == 1


def test_report_and_plot(stored_run):
    runs_dir, run_id = stored_run
    run_dir = runs_dir / run_id
    report = (run_dir / "report.md").read_text()
    assert "Best candidate: **o1.1**" in report and "**2.50x** against eager" in report
    assert "| 3 | optimization 1 | o1.1 | correct (best) | 4.000 | 2.50x | 2.00x |" in report
    assert "1. split rows across threads" in report and "![speedup by attempt](speedup.png)" in report
    assert (run_dir / "speedup.png").read_bytes()[:8] == b"\x89PNG\r\n\x1a\n"
    assert "kforge-test: ms=4.0" in (run_dir / "best.py").read_text()
