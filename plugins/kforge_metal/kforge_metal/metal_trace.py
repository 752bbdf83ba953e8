"""A Metal System Trace of the candidate's forwards, reduced to what the analyst argues about.

``metal-gpu-intervals`` holds one row per stretch of GPU work (a command buffer's encoder on one channel:
Compute, Vertex, Fragment) with the GPU's own start time and duration, for every process on the machine; only the
traced process's rows count. Their union over the traced window says how busy the GPU was, and the gaps between
them where it waited (for dispatches, synchronisation, the host). PyTorch's MPS profiler adds an os_signpost
interval (subsystem ``PyTorchMPS``) for each of its own operations and copies, which names them; kernels compiled
with ``compile_shader`` have no signpost, so their times come from the dispatch probe (see ``dispatch_probe``).
"""

from __future__ import annotations

import re
from collections import defaultdict
from dataclasses import dataclass

from .xctrace_xml import Table, number, text

MAX_TIMELINE_INTERVALS = 4000
SIGNPOST_SUBSYSTEM = "PyTorchMPS"
# "aten::add_dense (id=K3, run=2, gpu=0.012 ms)", "BlitCopy: MPS:Float[8] --> CPU:Float[8] (len=32 bytes, gpu=...)"
_RUN_DETAILS = re.compile(r"\s*\((?:id|len|CopyOverhead)=[^()]*\)\s*$")


@dataclass(frozen=True)
class GpuInterval:
    start_ns: int  # from the first interval of the traced process
    duration_ns: int
    channel: str
    label: str = ""


@dataclass(frozen=True)
class NamedWork:
    """PyTorch's own work named by its signposts: an operator or a copy, its calls and total duration."""

    name: str
    calls: int
    total_ns: int


@dataclass(frozen=True)
class TraceSummary:
    """What the trace says about the traced process's GPU work."""

    pid: int
    window_ns: int  # first GPU start to last GPU end
    busy_ns: int  # union of the GPU intervals
    intervals: int
    by_channel: tuple[tuple[str, int], ...]  # channel -> summed duration
    longest_gaps_ns: tuple[int, ...]  # the largest idle gaps inside the window, largest first
    named: tuple[NamedWork, ...] = ()
    timeline: tuple[GpuInterval, ...] = ()  # for the picture; at most MAX_TIMELINE_INTERVALS

    @property
    def busy_fraction(self) -> float:
        return self.busy_ns / self.window_ns if self.window_ns else 0.0


def gpu_intervals(table: Table, pid: int) -> list[GpuInterval]:
    """The rows of ``metal-gpu-intervals`` that belong to ``pid``, sorted by start, times made relative."""
    rows = []
    for row in table.rows:
        if table.pid(row.get("process")) != pid:
            continue
        start, duration = number(row.get("start")), number(row.get("duration"))
        if start is None or duration is None:
            continue
        rows.append((start, duration, text(row.get("channel-name")) or "GPU", text(row.get("event-label"))))
    rows.sort()
    origin = rows[0][0] if rows else 0
    return [GpuInterval(s - origin, d, c, label) for s, d, c, label in rows]


def union_runs(intervals: list[GpuInterval]) -> list[tuple[int, int]]:
    """The busy runs ``(start, end)``: overlapping or nested intervals counted once."""
    runs: list[tuple[int, int]] = []
    for interval in sorted(intervals, key=lambda i: i.start_ns):
        end = interval.start_ns + interval.duration_ns
        if runs and interval.start_ns <= runs[-1][1]:
            runs[-1] = (runs[-1][0], max(runs[-1][1], end))
        else:
            runs.append((interval.start_ns, end))
    return runs


def signposted_work(table: Table, pid: int) -> list[NamedWork]:
    """PyTorch's operations and copies from ``os-signpost-interval`` rows of ``pid``, by name."""
    totals: dict[str, list[int]] = defaultdict(lambda: [0, 0])
    for row in table.rows:
        if "process" in table.columns and table.pid(row.get("process")) != pid:
            continue
        if "subsystem" in table.columns and text(row.get("subsystem")) != SIGNPOST_SUBSYSTEM:
            continue
        message = next((text(row.get(c)) for c in ("start-message", "message", "end-message") if text(row.get(c))),
                       "") or text(row.get("name"))
        name = _RUN_DETAILS.sub("", message).strip()
        duration = number(row.get("duration")) or 0
        totals[name][0] += 1
        totals[name][1] += duration
    named = [NamedWork(name, calls, total) for name, (calls, total) in totals.items()]
    return sorted(named, key=lambda w: -w.total_ns)


def summarize_trace(intervals_table: Table, pid: int, signposts: Table | None = None) -> TraceSummary:
    intervals = gpu_intervals(intervals_table, pid)
    if not intervals:
        raise ValueError(f"the trace holds no GPU interval of process {pid}")
    runs = union_runs(intervals)
    window = runs[-1][1] - runs[0][0]
    by_channel: dict[str, int] = defaultdict(int)
    for interval in intervals:
        by_channel[interval.channel] += interval.duration_ns
    gaps = sorted((b[0] - a[1] for a, b in zip(runs, runs[1:])), reverse=True)
    return TraceSummary(
        pid=pid,
        window_ns=window,
        busy_ns=sum(end - start for start, end in runs),
        intervals=len(intervals),
        by_channel=tuple(sorted(by_channel.items(), key=lambda item: -item[1])),
        longest_gaps_ns=tuple(gaps[:5]),
        named=tuple(signposted_work(signposts, pid)) if signposts is not None else (),
        timeline=tuple(intervals[:MAX_TIMELINE_INTERVALS]),
    )
