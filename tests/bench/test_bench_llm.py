"""``kforge bench --llm``: the agent loop on every problem, each a normal run in the run store, with its tokens in
the bench's results (a scripted replay stands in for the model)."""

from __future__ import annotations

import json
import shutil

from harness.helpers import CANDIDATES, PROBLEMS

from kforge_core.store import RunStore

from .conftest import QUICK, kforge


def test_each_problem_is_a_run_of_the_agent_loop(bench_env, tmp_path):
    root, _, _ = bench_env
    suite = tmp_path / "suite"
    suite.mkdir()
    for name in ("1_relu_a", "2_relu_b"):
        shutil.copy(PROBLEMS / "relu_scale.py", suite / f"{name}.py")
    reply = "Here it is.\n\n```python\n" + (CANDIDATES / "relu_scale_numpy.py").read_text() + "```\n"
    script = tmp_path / "script.jsonl"
    script.write_text(json.dumps({"agent": "generation", "reply": reply,
                                  "usage": {"input_tokens": 1000, "output_tokens": 200}}) + "\n")
    runs = tmp_path / "runs"
    result, document = kforge("bench", str(suite), "--llm", f"replay:{script}", "--optimization-rounds", "0",
                              "--json", "--runs-dir", str(runs), *QUICK)
    assert result.exit_code == 0, result.output
    problems = {p["problem"]: p for p in document["problems"]}
    assert set(problems) == {"1_relu_a", "2_relu_b"}
    assert all(p["correct"] and p["speedups"] for p in problems.values()), problems
    assert all(p["usage"] == {"calls": 1, "input_tokens": 1000, "output_tokens": 200, "cost_usd": None}
               for p in problems.values())
    assert document["summary"]["llm"]["calls"] == 2 and document["summary"]["source"].startswith("llm:replay:")
    with RunStore(runs) as store:
        run_ids = {run.id: run for run in store.list_runs()}
    assert set(run_ids) == {p["run_id"] for p in problems.values()}
    assert all(run.status == "finished" and run.best_label == "f1" for run in run_ids.values())
    report = (runs / document["bench"] / "report.md").read_text()
    assert "| tokens | cost (USD) | run |" in report and "LLM: 2 calls, 2,400 tokens" in report
