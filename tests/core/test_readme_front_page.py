"""The README is a front page a newcomer reads to the end: short, no commit hashes (measurements with their commits
live in docs/measurements.md), and every page of docs/ one link away."""

from __future__ import annotations

import re
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]
README = ROOT / "README.md"
MOST_LINES = 400
# a short or long commit hash: 7 to 40 hex digits, with at least one letter and one digit (not a date, not a word)
COMMIT = re.compile(r"\b(?=[0-9a-f]*[a-f])(?=[0-9a-f]*[0-9])[0-9a-f]{7,40}\b")


def test_the_readme_is_short():
    assert len(README.read_text().splitlines()) <= MOST_LINES


def test_the_readme_names_no_commit():
    lines = [f"{n}: {line}" for n, line in enumerate(README.read_text().splitlines(), 1) if COMMIT.search(line)]
    assert lines == [], "\n".join(lines)


def test_the_commit_finder_finds_one():
    assert COMMIT.search("measured at 49a625a on the H100") and not COMMIT.search("run 20261125-211653-a42a")


def test_every_link_of_the_readme_resolves_and_every_doc_is_linked():
    text = README.read_text()
    targets = {m.split("#")[0] for m in re.findall(r"\]\(([^)\s]+)\)", text) if not m.startswith(("http", "#"))}
    assert sorted(t for t in targets if not (ROOT / t).exists()) == []
    docs = {str(p.relative_to(ROOT)) for p in (ROOT / "docs").rglob("*.md")}
    assert sorted(docs - targets) == []
