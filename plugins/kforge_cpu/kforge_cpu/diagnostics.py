"""Numba's parallel diagnostics for a compiled kernel: which loops ran in parallel, which were fused or serialised,
and which allocations Numba hoisted out of a parallel loop.

``Dispatcher.parallel_diagnostics`` prints a report; it is captured as text and the few facts the analyst needs are
parsed out of it. The report's "Instruction hoisting" part (IR dumps) is left out of the kept text.
"""

from __future__ import annotations

import contextlib
import io
import re
from dataclasses import dataclass
from typing import Any

LEVEL = 4
LOOP_ID = re.compile(r"^(.*?)-*\|\s*#(\d+)\s*$")
TREE_NODE = re.compile(r"^(\s*)\+--(\d+) \((parallel|serial)(.*)\)\s*$")
FUSED = re.compile(r"had (\d+) loop\(s\) fused")
ALLOCATION = re.compile(r"^\s*Allocation:: (.+)$")
HOISTED_FROM = re.compile(r"hoisted out of the parallel loop labelled #(\d+)")
MAX_TEXT_LINES = 80


@dataclass(frozen=True)
class ParallelLoop:
    loop_id: int
    source: str  # the source line Numba attributes the loop to


@dataclass(frozen=True)
class ParallelReport:
    """What Numba's parallel pass did with one compiled signature of a kernel."""

    loops: tuple[ParallelLoop, ...]  # every loop Numba found parallelisable (prange, array expressions, reductions)
    parallel: int  # loops that run in parallel after fusion
    serialized: int  # parallelisable loops nested in another parallel loop, hence run serially
    fused: int  # loops fused into another
    hoisted_allocations: tuple[str, ...]  # "#4: tmp = np.zeros(16)"
    text: str  # the report, without the IR dumps


def capture_report(dispatcher: Any, signature: Any) -> str:
    buffer = io.StringIO()
    with contextlib.redirect_stdout(buffer):
        dispatcher.parallel_diagnostics(signature, level=LEVEL)
    return buffer.getvalue()


def _section(lines: list[str], title: str) -> list[str]:
    """The lines after a ``---- title ----`` rule, up to the next rule."""
    for i, line in enumerate(lines):
        if title in line and line.strip().startswith("-"):
            end = i + 1
            while end < len(lines) and not lines[end].startswith("-----"):
                end += 1
            return lines[i + 1:end]
    return []


def _listed_loops(lines: list[str]) -> tuple[ParallelLoop, ...]:
    loops = []
    for line in lines:
        match = LOOP_ID.match(line)
        if match:
            loops.append(ParallelLoop(int(match.group(2)), match.group(1).strip()))
    return tuple(loops)


def _hoisted(lines: list[str]) -> tuple[str, ...]:
    found, loop = [], "?"
    for line in lines:
        origin = HOISTED_FROM.search(line)
        if origin:
            loop = origin.group(1)
        allocation = ALLOCATION.match(line)
        if allocation:
            found.append(f"#{loop}: {allocation.group(1).strip()}")
    return tuple(found)


def _kept_text(lines: list[str]) -> str:
    """The report up to "Instruction hoisting", without blank runs, capped."""
    kept: list[str] = []
    for line in lines:
        if "Instruction hoisting" in line:
            break
        if line.strip() or (kept and kept[-1].strip()):
            kept.append(line.rstrip())
    if len(kept) > MAX_TEXT_LINES:
        kept = kept[:MAX_TEXT_LINES] + [f"[{len(kept) - MAX_TEXT_LINES} more lines]"]
    return "\n".join(kept).strip("\n")


def parse_report(text: str) -> ParallelReport:
    lines = text.splitlines()
    loops = _listed_loops(lines)
    nodes = [m for m in map(TREE_NODE.match, _section(lines, "After Optimisation")) if m]
    serialized = sum(1 for m in nodes if m.group(3) == "serial")
    fused = sum(int(m.group(1)) for m in FUSED.finditer(text))
    # The region tree leaves out some loops (a prange after fused array expressions), so the parallel loops are
    # counted from the listing: every loop listed runs in parallel unless it was fused into or nested in another.
    if loops:
        parallel = len(loops) - serialized - fused
    else:  # no source listing (code not from a file): the tree's top-level loops
        parallel = sum(1 for m in nodes if not m.group(1) and m.group(3) == "parallel")
    return ParallelReport(loops, parallel, serialized, fused, _hoisted(lines), _kept_text(lines))


def parallel_report(dispatcher: Any, signature: Any) -> ParallelReport:
    return parse_report(capture_report(dispatcher, signature))
