"""The ``device`` timer's arithmetic on the profiler's records (no GPU needed): each run's window, the device's
kernels, copies and fills inside it on every stream, summed; host ops and annotations never count."""

from __future__ import annotations

import pytest

from kforge_nvidia.device import CudaDevice
from kforge_nvidia.device_time import (CALLER_MARK, RUN_PREFIX, ActivityRecord, busy_ms_per_run, caller_stream,
                                       streams_in_runs)


def _window(index, start, end):
    return ActivityRecord(f"{RUN_PREFIX}{index}", False, "user_annotation", start, end - start)


def _device(name, activity, start, duration):
    return ActivityRecord(name, True, activity, start, duration)


def test_each_run_sums_the_device_work_that_started_in_its_window_on_every_stream():
    records = [
        _window(0, 1_000, 5_000), _window(1, 6_000, 9_000),
        _device("relu_kernel", "kernel", 1_200, 1_000_000),  # run 0, the caller's stream
        _device("spin_kernel", "kernel", 1_300, 2_000_000),  # run 0, a side stream at the same time: counts too
        _device("Memcpy DtoD", "gpu_memcpy", 2_000, 500_000),
        _device("Memset", "gpu_memset", 6_500, 250_000),  # run 1
        _device("kforge.timed_run.1", "gpu_user_annotation", 6_000, 3_000),  # the annotation's GPU shadow
        ActivityRecord("aten::relu", False, "cpu_op", 1_100, 900),  # host work
        _device("flush_kernel", "kernel", 500, 4_000_000),  # before run 0's window: the flush
    ]
    assert busy_ms_per_run(records, 2) == [pytest.approx(3.5), pytest.approx(0.25)]


def test_the_streams_counted_are_those_of_device_work_inside_the_runs():
    def on(stream, start):
        return ActivityRecord("k", True, "kernel", start, 100, stream)

    records = [_window(0, 1_000, 5_000), _window(1, 6_000, 9_000),
               on(7, 1_200), on(7, 6_100), on(21, 6_200),  # the caller's stream, and a side stream in run 1
               on(3, 500),  # the flush, before run 0's window: its stream is not the candidate's
               ActivityRecord("aten::relu", False, "cpu_op", 1_100, 900, 99)]
    assert streams_in_runs(records, 2) == 2
    assert streams_in_runs(records[:3], 1) == 1
    assert streams_in_runs([_window(0, 0, 10), _device("k", "kernel", 5, 1)], 1) == 0  # no stream recorded


def test_the_callers_stream_counts_so_work_moved_off_it_shows_as_a_second_stream():
    def on(stream, start):
        return ActivityRecord("k", True, "kernel", start, 100, stream)

    mark = [ActivityRecord(CALLER_MARK, False, "user_annotation", 100, 200), on(7, 150)]  # the session's fill
    side_only = [_window(0, 1_000, 5_000), on(21, 1_200)]  # all the work on a stream of the candidate's own
    on_caller = [_window(0, 1_000, 5_000), on(7, 1_200)]
    assert caller_stream(mark + side_only) == 7
    assert streams_in_runs(mark + side_only, 1) == 2
    assert streams_in_runs(mark + on_caller, 1) == 1
    assert streams_in_runs(side_only, 1) == 1  # without the mark the caller's stream is not known
    assert caller_stream([on(7, 150)]) == -1


def test_a_run_without_a_window_is_an_error_not_a_zero():
    with pytest.raises(RuntimeError, match=r"no window for timed runs \[1\]"):
        busy_ms_per_run([_window(0, 0, 10)], 2)


def test_the_cuda_device_offers_all_three_timers():
    assert CudaDevice.event_timer.startswith("a pair of torch.cuda.Event")
    assert "every stream" in CudaDevice.device_timer


def test_workers_start_with_cupti_torn_down_after_each_profiler_session():
    assert ("TEARDOWN_CUPTI", "1") in CudaDevice.runtime_environment


class _KinetoEventWithoutKind:
    """A kineto event as PyTorch 2.11 exposes it: no ``activity_type``, ``is_user_annotation`` there."""

    def __init__(self, name, annotation):
        self._name, self._annotation = name, annotation

    def name(self):
        return self._name

    def is_user_annotation(self):
        return self._annotation


def test_without_a_record_kind_device_work_is_told_from_annotations():
    from kforge_nvidia.device_time import _activity

    assert _activity(_KinetoEventWithoutKind("spin_kernel(long)", False), on_device=True) == "kernel"
    assert _activity(_KinetoEventWithoutKind("Memcpy DtoD", False), on_device=True) == "kernel"
    assert _activity(_KinetoEventWithoutKind(f"{RUN_PREFIX}0", True), on_device=True) == "gpu_user_annotation"
    assert _activity(_KinetoEventWithoutKind("aten::mm", False), on_device=False) == "cpu_op"
