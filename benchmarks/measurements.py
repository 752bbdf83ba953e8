"""Record a benchmark's JSON output in docs/measurements.md: a dated entry at the top of its topic.

A figure quoted without its date, machine and commit goes stale unnoticed; this keeps each one with all three. It
reads the JSON document a benchmark printed or wrote (the whole input, or the document that ends it: benchmarks
print their report first and the JSON last), keeps its numbers and booleans under their dotted paths (all of them,
or those matching ``--only``), and adds them as a table under a heading ``### DATE, MACHINE, at COMMIT: TITLE``
with the command that produced them. The topic's section (``## TOPIC``) is made, first among the topics, where
there is none yet. The sentences that say what the figures mean are written under the heading by hand.

    python benchmarks/bench_suite.py --backend cpu --problems 8 --json > out.txt
    python benchmarks/measurements.py out.txt --topic "Warm slots and cached baselines" \\
        --machine "the 2-core machine" --command "python benchmarks/bench_suite.py --backend cpu --problems 8 --json"
"""

from __future__ import annotations

import argparse
import datetime
import fnmatch
import json
import subprocess
import sys
from pathlib import Path
from typing import Any, Iterator

DOC = Path(__file__).resolve().parents[1] / "docs" / "measurements.md"
MAX_ROWS = 60  # an entry longer than this is unreadable: --only picks the figures worth keeping


class MeasurementError(Exception):
    """A document or an argument this script cannot record, said in one line."""


def read_document(text: str) -> Any:
    """The JSON document ``text`` is, or the one that ends it (a line starting ``{`` or ``[`` and everything after)."""
    try:
        return json.loads(text)
    except json.JSONDecodeError:
        pass
    decoder = json.JSONDecoder()
    starts = [i for i, ch in enumerate(text) if ch in "{[" and (i == 0 or text[i - 1] == "\n")]
    for start in reversed(starts):
        try:
            document, end = decoder.raw_decode(text, start)
        except json.JSONDecodeError:
            continue
        if not text[end:].strip():
            return document
    raise MeasurementError("no JSON document found (neither the whole input nor one that ends it)")


def figures(document: Any, only: list[str] | None = None) -> list[tuple[str, str]]:
    """``(dotted path, value)`` for each number and boolean in ``document``, in its order; with ``only``, those
    whose path matches one of the globs."""
    rows = [(path, _shown(value)) for path, value in _leaves(document, "")]
    if only:
        rows = [(path, value) for path, value in rows if any(fnmatch.fnmatchcase(path, glob) for glob in only)]
    return rows


def _leaves(value: Any, path: str) -> Iterator[tuple[str, Any]]:
    if isinstance(value, dict):
        for key, item in value.items():
            yield from _leaves(item, f"{path}.{key}" if path else str(key))
    elif isinstance(value, list):
        for index, item in enumerate(value):
            yield from _leaves(item, f"{path}.{index}" if path else str(index))
    elif isinstance(value, (bool, int, float)):
        yield path, value


def _shown(value: bool | int | float) -> str:
    if isinstance(value, bool):
        return "true" if value else "false"
    return f"{value:.6g}" if isinstance(value, float) else str(value)


def entry(*, date: str, machine: str, commit: str, title: str, command: str, rows: list[tuple[str, str]]) -> str:
    """The entry's markdown: its heading, the command, the figures as a table."""
    if not rows:
        raise MeasurementError("no figure to record (the document holds no number, or --only matched none)")
    if len(rows) > MAX_ROWS:
        raise MeasurementError(f"{len(rows)} figures: choose the ones worth keeping with --only (at most {MAX_ROWS})")
    heading = f"### {date}, {machine}, at {commit}" + (f": {title}" if title else "")
    lines = [heading, ""]
    if command:
        lines += [f"`{command}`", ""]
    lines += ["| figure | value |", "| --- | --- |", *(f"| `{path}` | {value} |" for path, value in rows)]
    return "\n".join(lines) + "\n"


def insert(doc: str, topic: str, new_entry: str) -> str:
    """``doc`` with ``new_entry`` first under ``## topic``; a new section, before the first topic, where there is
    none. The intro (everything before the first ``## ``) stays where it is."""
    lines = doc.splitlines(keepends=True)
    heading = f"## {topic}"
    sections = [i for i, line in enumerate(lines) if line.startswith("## ")]
    at = next((i for i in sections if lines[i].rstrip("\n") == heading), None)
    if at is None:
        first = sections[0] if sections else len(lines)
        block = f"{heading}\n\n{new_entry}\n"
        return "".join(lines[:first]) + block + "".join(lines[first:])
    end = next((i for i in sections if i > at), len(lines))
    first_entry = next((i for i in range(at + 1, end) if lines[i].startswith("### ")), end)
    return "".join(lines[:first_entry]) + new_entry + "\n" + "".join(lines[first_entry:])


def head_commit() -> str:
    """The checkout's commit, short; ``--commit`` says it where git cannot."""
    done = subprocess.run(["git", "rev-parse", "--short", "HEAD"], capture_output=True, text=True,
                          cwd=Path(__file__).resolve().parent)
    if done.returncode != 0:
        raise MeasurementError("git cannot name the commit here: give it with --commit")
    return done.stdout.strip()


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("json", help="the benchmark's output: a file, or - for standard input")
    parser.add_argument("--topic", required=True, help="the section of docs/measurements.md (its ## heading)")
    parser.add_argument("--machine", required=True, help="where it ran, e.g. 'NVIDIA H100 80GB HBM3'")
    parser.add_argument("--command", default="", help="the command that produced the JSON")
    parser.add_argument("--title", default="", help="a few words after the heading's commit")
    parser.add_argument("--commit", help="the commit measured (default: git rev-parse --short HEAD)")
    parser.add_argument("--date", default=datetime.date.today().isoformat(), help="YYYY-MM-DD (default: today)")
    parser.add_argument("--only", action="append", metavar="GLOB", help="keep figures whose path matches (repeatable)")
    parser.add_argument("--doc", type=Path, default=DOC, help="the file to add to (default: docs/measurements.md)")
    args = parser.parse_args(argv)
    try:
        datetime.date.fromisoformat(args.date)
        text = sys.stdin.read() if args.json == "-" else Path(args.json).read_text()
        rows = figures(read_document(text), args.only)
        new_entry = entry(date=args.date, machine=args.machine, commit=args.commit or head_commit(),
                          title=args.title, command=args.command, rows=rows)
        args.doc.write_text(insert(args.doc.read_text(), args.topic, new_entry))
    except (MeasurementError, OSError, ValueError) as exc:
        print(f"Error: {exc}", file=sys.stderr)
        return 1
    print(f"added {len(rows)} figures under '## {args.topic}' in {args.doc}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
