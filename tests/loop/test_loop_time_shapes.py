"""`kforge run --time-shapes` on the real cpu backend: once the search ends, its best candidate is timed at each of
the problem's shape variants too, and report.md shows the speedup per shape beside a plot of it."""

from __future__ import annotations

import json

import pytest
from loop_e2e import DEMO_SCRIPT, SMALL_PROBLEM, only_report, quick_environment, run_kforge


@pytest.mark.slow
def test_the_best_candidate_is_timed_at_every_shape_variant_and_reported(tmp_path):
    correct = json.loads(DEMO_SCRIPT.read_text().splitlines()[3])  # the demo's first correct kernel (f4)
    assert correct["note"] == "04_correct_slow.py"
    script = tmp_path / "one.jsonl"
    script.write_text(json.dumps({k: correct[k] for k in ("agent", "note", "reply")}) + "\n")  # no expectation
    runs = tmp_path / "runs"
    done = run_kforge("run", str(SMALL_PROBLEM), "--backend", "cpu", "--llm", f"replay:{script}", "--runs-dir",
                      str(runs), "--max-llm-calls", "1", "--time-shapes", env=quick_environment())
    assert done.returncode == 0, done.stdout + done.stderr
    assert "timing f1 at the problem's 3 shape variants (--time-shapes)" in done.stdout, done.stdout

    report = only_report(runs)
    assert [t.shape for t in report.shape_timings] == ["own", "half", "prime", "double"]
    assert report.shape_timings[0].runtime_ms == report.best.outcome.runtime_ms  # the search's own figure
    for row in report.shape_timings:
        assert row.speedup is not None and row.speedup > 0 and row.runtime_ms > 0, row
        assert f"  {row.shape}: {row.inputs}: {row.speedup:.2f}x" in done.stdout
    assert [t.elements for t in report.shape_timings] == [512 * 2048, 256 * 1024, 509 * 2039, 1024 * 4096]
    markdown = (report.run_dir / "report.md").read_text()
    assert "## Speedup per shape" in markdown and "![speedup against the size of the inputs](shapes.png)" in markdown
    assert "| prime | tensor[509, 2039] float32 | 1,037,851 |" in markdown
    assert (report.run_dir / "shapes.png").read_bytes()[:4] == b"\x89PNG"
