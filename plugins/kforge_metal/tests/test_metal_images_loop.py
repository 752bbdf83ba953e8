"""Images reach the analyst in a replayed run: `kforge run` with the real harness on a backend whose stages are
the cpu backend's and whose profile summary is metal's (from the fixture profile: ``metal_summary_for_cpu``), a
user's screenshot given with --profile-image. The
replay script's expect.images checks, on each analysis prompt, both pictures in order; the run directory keeps
what was sent."""

from __future__ import annotations

import json
import os
from pathlib import Path

import pytest
from click.testing import CliRunner

from kforge_core.app import App
from kforge_core.cli import cli
from kforge_core.report import RunReport
from kforge_core.store import RunStore

HERE = Path(__file__).resolve().parent
ROOT = HERE.parents[2]
SMALL_PROBLEM = ROOT / "tests" / "loop" / "problems" / "gelu_scale_small.py"
CORRECT = (ROOT / "examples" / "replay" / "cpu_demo" / "04_correct_slow.py").read_text()
QUICK = {"KFORGE_HARNESS__TRIALS": "2", "KFORGE_HARNESS__WARMUP": "1", "KFORGE_HARNESS__REPETITIONS": "3",
         "KFORGE_HARNESS__BASELINES": '["eager"]', "KFORGE_BACKENDS__CPU-METAL-SUMMARY__THREAD_SCALING": "false",
         "KFORGE_BACKENDS__CPU-METAL-SUMMARY__PROFILE_REPETITIONS": "2", "KFORGE_HARNESS__SPARE_WORKERS": "0"}


@pytest.mark.slow
def test_the_metal_picture_and_a_screenshot_reach_the_analyst(tmp_path, monkeypatch, small_png):
    for name, value in QUICK.items():
        monkeypatch.setenv(name, value)
    monkeypatch.setenv("PYTHONPATH", os.pathsep.join([str(HERE), os.environ.get("PYTHONPATH", "")]))
    expect = {"images": ["metal_profile.png", "image-1-capture.png"],
              "contains": ["busy 65% of the 2.989 ms", "Attached image 1: the GPU timeline",
                           "Attached image 2: a screenshot supplied by the user (capture.png)"]}
    script = tmp_path / "script.jsonl"
    script.write_text("\n".join(json.dumps(line) for line in [
        {"agent": "generation", "reply": f"```python\n{CORRECT}```", "expect": {"images": 0}},
        {"agent": "analysis", "reply": "1. The GPU idles a third of the time: fuse the dispatches.", "expect": expect},
        {"agent": "generation", "reply": f"```python\n{CORRECT}```", "expect": {"images": 0}},
    ]) + "\n")
    result = CliRunner().invoke(cli, [
        "run", str(SMALL_PROBLEM), "--backend", "cpu-metal-summary", "--llm", f"replay:{script}", "--optimization-rounds", "1",
        "--profile-image", str(small_png), "--runs-dir", str(tmp_path / "runs"),
    ], obj=App(plugin_modules=("metal_summary_for_cpu",)))
    assert result.exit_code == 0, result.output

    with RunStore(tmp_path / "runs") as store:
        (run,) = store.list_runs()
        report = RunReport.from_store(store, run.id)
    assert len(report.rounds) == 1 and report.rounds[0].recommendations.startswith("1. The GPU idles")
    sent = sorted(report.run_dir.glob("steps/*-analysis-*/prompt-image-*.png"))
    assert [p.name for p in sent] == ["prompt-image-1.png", "prompt-image-2.png"]
    assert sent[1].read_bytes() == small_png.read_bytes()
    assert sent[0].read_bytes()[:4] == b"\x89PNG" and sent[0].stat().st_size > 10_000  # the metal picture
    assert (report.run_dir / "inputs" / "image-1-capture.png").is_file()
