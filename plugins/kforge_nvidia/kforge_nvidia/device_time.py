"""The ``device`` timer on NVIDIA GPUs: how long the GPU was busy in each timed run, from CUPTI's activity records
as the PyTorch profiler collects them (``torch.autograd.profiler.profile`` with CUDA activities, the profiler
``torch.profiler`` wraps).

A run's device time is the sum of the durations of every kernel, memcpy and memset that started inside the run's
window (a ``record_function`` range around the call and the device-wide synchronize), on every stream: work moved
to a side stream counts, and work on two streams at once counts twice (busy time, not elapsed time). One profiler
session spans all the runs of a series; the profiler's own cost (its callbacks on every launch) lands on the host
side only, which is why the harness takes the wall and events figures in runs of their own.

The streams a series involved are counted with the caller's stream among them: the session opens with one small
fill on the caller's stream, inside a ``kforge.caller_stream`` range, outside every run, so that its record names
that stream. A candidate whose work all ran on a stream of its own counts two streams, not one.

Importing this module does not import torch.
"""

from __future__ import annotations

import contextlib
from dataclasses import dataclass
from typing import Any, Iterable, Iterator

from kforge_core.device import DeviceClock

RUN_PREFIX = "kforge.timed_run."
CALLER_MARK = "kforge.caller_stream"  # the range of the fill that names the caller's stream
# CUPTI activity kinds as kineto names them: what the device itself ran
DEVICE_ACTIVITIES = ("kernel", "gpu_memcpy", "gpu_memset")
DESCRIPTION = ("CUPTI activity records through the PyTorch profiler (its CUDA activities): the durations of every "
               "kernel, memcpy and memset of the run, on every stream, summed")


@dataclass(frozen=True)
class ActivityRecord:
    """One record of the profiler's trace, as far as device time needs it."""

    name: str
    on_device: bool  # a GPU record (not a host-side op or annotation)
    activity: str  # kineto's kind: "kernel", "gpu_memcpy", "gpu_memset", "gpu_user_annotation", ...
    start_ns: int
    duration_ns: int
    stream: int = -1  # the stream a device record ran on (kineto's device_resource_id); -1: not known


def busy_ms_per_run(records: Iterable[ActivityRecord], runs: int) -> list[float]:
    """Each run's device busy time: the device records that start inside the host range ``kforge.timed_run.<i>``."""
    return _busy_ms(work_per_run(records, runs))


def streams_in_runs(records: Iterable[ActivityRecord], runs: int) -> int:
    """How many streams the runs involved: the caller's (where a ``kforge.caller_stream`` record names it) and
    every stream their device work ran on; 0 when the records name none."""
    records = list(records)
    return _streams(work_per_run(records, runs), caller_stream(records))


def caller_stream(records: Iterable[ActivityRecord]) -> int:
    """The stream of the device work that started inside the ``kforge.caller_stream`` range; -1 when none did."""
    records = list(records)
    marks = [(r.start_ns, r.start_ns + r.duration_ns) for r in records if not r.on_device and r.name == CALLER_MARK]
    for record in records:
        if record.on_device and record.activity in DEVICE_ACTIVITIES and record.stream >= 0 and any(
                start <= record.start_ns <= end for start, end in marks):
            return record.stream
    return -1


def _busy_ms(work: list[list[ActivityRecord]]) -> list[float]:
    return [sum(r.duration_ns for r in records) / 1e6 for records in work]


def _streams(work: list[list[ActivityRecord]], caller: int = -1) -> int:
    streams = {r.stream for records in work for r in records if r.stream >= 0}
    return len(streams | {caller}) if caller >= 0 else len(streams)


def work_per_run(records: Iterable[ActivityRecord], runs: int) -> list[list[ActivityRecord]]:
    """Each run's device records: the kernels, copies and fills that start inside its window."""
    records = list(records)
    windows: dict[int, tuple[int, int]] = {}
    for record in records:
        if not record.on_device and record.name.startswith(RUN_PREFIX):
            index = int(record.name[len(RUN_PREFIX):])
            windows[index] = (record.start_ns, record.start_ns + record.duration_ns)
    missing = [i for i in range(runs) if i not in windows]
    if missing:
        raise RuntimeError(f"the profiler recorded no window for timed runs {missing}")
    device = [r for r in records if r.on_device and r.activity in DEVICE_ACTIVITIES]
    return [[r for r in device if windows[i][0] <= r.start_ns <= windows[i][1]] for i in range(runs)]


class CuptiClock(DeviceClock):
    """One profiler session (``torch.autograd.profiler.profile`` with CUDA activities) over a series of runs."""

    def __init__(self) -> None:
        self._profiler: Any = None
        self._runs = 0
        self._work_per_run: list[list[ActivityRecord]] | None = None
        self._caller = -1

    def __enter__(self) -> CuptiClock:
        import torch
        from torch.autograd.profiler import profile

        # the profiler torch.profiler.profile wraps: that wrapper's first session imports Inductor (and Dynamo with
        # it) to ask whether Inductor's CUDA graphs are on, seconds of work the clock does not need
        self._profiler = profile(use_device="cuda", use_kineto=True)
        self._profiler.__enter__()
        with torch.profiler.record_function(CALLER_MARK):  # a record on the caller's stream, to name it
            torch.zeros(1, device="cuda")
        torch.cuda.synchronize()
        return self

    def __exit__(self, *exc_info: object) -> None:
        self._profiler.__exit__(*exc_info)

    @contextlib.contextmanager
    def run(self, index: int) -> Iterator[None]:
        import torch

        self._runs = max(self._runs, index + 1)
        with torch.profiler.record_function(f"{RUN_PREFIX}{index}"):
            yield

    def busy_ms(self) -> list[float]:
        return _busy_ms(self._work())

    def streams(self) -> int:
        return _streams(self._work(), self._caller)

    def _work(self) -> list[list[ActivityRecord]]:
        """Each run's device records, read from the session once (the caller's stream with them)."""
        if self._work_per_run is None:
            records = list(_records(self._profiler))
            self._work_per_run, self._caller = work_per_run(records, self._runs), caller_stream(records)
        return self._work_per_run


def _records(profiler: Any) -> Iterator[ActivityRecord]:
    """The kineto events of a finished session (read directly: building FunctionEvents costs far more)."""
    from torch.autograd import DeviceType

    for event in profiler.kineto_results.events():
        on_device = event.device_type() != DeviceType.CPU
        yield ActivityRecord(event.name(), on_device, _activity(event, on_device), int(event.start_ns()),
                             int(event.duration_ns()), _stream(event) if on_device else -1)


def _stream(event: Any) -> int:
    """The stream of a device record: kineto keeps it as the record's resource id."""
    return int(event.device_resource_id()) if hasattr(event, "device_resource_id") else -1


def _activity(event: Any, on_device: bool) -> str:
    """Kineto's kind of a record; PyTorch builds that do not expose it get it from what they do expose."""
    if hasattr(event, "activity_type"):
        return str(event.activity_type()).lower()
    if not on_device:
        return "cpu_op"
    annotation = event.is_user_annotation() if hasattr(event, "is_user_annotation") else False
    return "gpu_user_annotation" if annotation or event.name().startswith(RUN_PREFIX) else "kernel"
