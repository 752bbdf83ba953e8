"""Measured figures live in docs/measurements.md, each dated, with its machine and commit; benchmarks/measurements.py
adds a benchmark's JSON there as a new entry at the top of its topic."""

from __future__ import annotations

import importlib.util
import json
import re
import subprocess
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[2]
SCRIPT = ROOT / "benchmarks" / "measurements.py"
DOC = ROOT / "docs" / "measurements.md"


def _script():
    spec = importlib.util.spec_from_file_location("kforge_measurements_script", SCRIPT)
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


DOC_TEXT = """# Measurements

Intro.

## Bench throughput

### 2026-11-26, H100, at 1234567: older

an older entry

## Adding a measurement

How.
"""

# what a benchmark prints: its report, then the JSON document last
OUTPUT = 'round 1: bench: 80.1 s\n{\n "problems": ["a", "b"],\n "summary": {"median_s": 1.5, "mean_s": 4.25,\n' \
         ' "agree": true, "verdict": "correct"},\n "rounds": [{"seconds": 81.0}, {"seconds": 79.5}]\n}\n'


def test_an_entry_goes_first_in_its_topic_with_date_machine_commit_and_command(tmp_path):
    doc = tmp_path / "measurements.md"
    doc.write_text(DOC_TEXT)
    output = tmp_path / "out.txt"
    output.write_text(OUTPUT)
    done = subprocess.run([sys.executable, str(SCRIPT), str(output), "--topic", "Bench throughput", "--machine",
                           "NVIDIA H200", "--commit", "abcdef0", "--date", "2026-11-28", "--title", "fresh caches",
                           "--command", "kforge bench suite --json", "--doc", str(doc)],
                          capture_output=True, text=True)
    assert done.returncode == 0, done.stderr
    text = doc.read_text()
    new = text.index("### 2026-11-28, NVIDIA H200, at abcdef0: fresh caches")
    assert text.index("## Bench throughput") < new < text.index("### 2026-11-26, H100, at 1234567: older")
    entry = text[new:text.index("### 2026-11-26")]
    assert "`kforge bench suite --json`" in entry
    assert "| `summary.median_s` | 1.5 |" in entry and "| `summary.agree` | true |" in entry
    assert "| `rounds.1.seconds` | 79.5 |" in entry and "verdict" not in entry  # numbers and booleans only
    assert text.startswith("# Measurements\n\nIntro.\n") and text.rstrip().endswith("How.")


def test_a_new_topic_comes_first_after_the_intro():
    script = _script()
    new = script.entry(date="2026-11-28", machine="the 2-core machine", commit="abcdef0", title="", command="",
                       rows=[("seconds", "9.5")])
    text = script.insert(DOC_TEXT, "Hangs", new)
    assert text.index("Intro.") < text.index("## Hangs\n\n### 2026-11-28, the 2-core machine, at abcdef0\n") \
        < text.index("## Bench throughput")


def test_only_keeps_the_figures_asked_for_and_a_long_table_is_refused():
    script = _script()
    document = script.read_document(OUTPUT)
    assert script.figures(document, ["summary.*"]) == [("summary.median_s", "1.5"), ("summary.mean_s", "4.25"),
                                                      ("summary.agree", "true")]
    rows = script.figures({"x": list(range(script.MAX_ROWS + 1))})
    with pytest.raises(script.MeasurementError, match="--only"):
        script.entry(date="2026-11-28", machine="m", commit="c", title="", command="", rows=rows)
    with pytest.raises(script.MeasurementError, match="no JSON document"):
        script.read_document("round 1: 80 s\n")
    assert script.read_document(json.dumps([1, 2])) == [1, 2]


def test_every_measurement_entry_is_dated_and_names_its_machine():
    """An entry's heading starts with its date (YYYY-MM-DD), then the machine."""
    headings = re.findall(r"^### (.*)$", DOC.read_text(), re.M)
    undated = [h for h in headings if not re.match(r"\d{4}-\d{2}-\d{2}, \S", h)]
    assert headings and undated == []
