"""Timing in proportion: the timed runs follow the call's length (fewer for a long call, never below what the
outside clock needs), the verdict says how many were made, and every figure carries its median's confidence
interval, the speedup too."""

from __future__ import annotations

import re

import pytest

from kforge_core.harness.host.baselines_window import measure_window
from kforge_core.harness.host.outside_clock import MIN_CALLS, CallLog
from kforge_core.harness.host.run_count import FEWEST_RUNS, measured_timers, timed_runs
from kforge_core.harness.verdict import RuntimeStats
from kforge_core.settings import HarnessSettings
from kforge_core.timing.confidence import median_interval, speedup_interval

from .test_timing import FakeWorkers


def test_a_long_call_gets_fewer_runs_never_fewer_than_the_outside_clock_needs_nor_more_than_asked():
    settings = HarnessSettings()  # 20 runs at most, 100 ms of each callable's time under each timer
    assert FEWEST_RUNS == MIN_CALLS == 8
    assert timed_runs(None, settings) == 20  # not known: as asked
    assert timed_runs(0.01, settings) == 20 and timed_runs(5.0, settings) == 20
    assert timed_runs(10.0, settings) == 10 and timed_runs(7.0, settings) == 15
    assert timed_runs(40.0, settings) == 8 and timed_runs(4000.0, settings) == 8
    assert timed_runs(40.0, HarnessSettings(repetitions=5)) == 5  # never more than asked, even below the floor
    assert timed_runs(40.0, HarnessSettings(timing_target_ms=0)) == 20  # 0: always repetitions
    with pytest.raises(ValueError, match="timing_target_ms"):
        HarnessSettings(timing_target_ms=-1)


def test_a_long_call_is_timed_under_the_headline_alone_unless_every_timer_is_asked_for():
    gpu = ("wall", "events", "device")
    events = HarnessSettings(timer="events")
    assert measured_timers(5.0, events, gpu) == ()  # short: every timer, beside the headline
    assert measured_timers(None, events, gpu) == ()
    # 8 runs of it are more than 100 ms; the device's clock stays beside the events, the guard against hidden streams
    assert measured_timers(13.0, events, gpu) == ("events", "device")
    assert measured_timers(13.0, HarnessSettings(timer="wall"), gpu) == ("wall",)
    assert measured_timers(13.0, HarnessSettings(timer="device"), ("wall",)) == ("wall",)  # the device's fallback
    assert measured_timers(13.0, HarnessSettings(timer="events", beside_timers="all"), gpu) == ()
    assert measured_timers(0.1, HarnessSettings(beside_timers="headline"), gpu) == ("wall",)
    assert measured_timers(500.0, HarnessSettings(timing_target_ms=0), gpu) == ()  # 0: no proportion at all


def test_a_worker_times_under_the_timers_it_is_asked_for():
    from kforge_core.devices import make_device
    from kforge_core.harness.worker.reference import reference_data
    from kforge_core.harness.worker.run_timing import time_runs, timing_method

    from .helpers import TORCH_CPU, problem

    device = make_device(TORCH_CPU)
    settings = HarnessSettings(warmup=1, repetitions=3)
    reference = reference_data(problem("relu_scale"), device, settings)
    timed = time_runs(lambda x: x * 2, reference, device, settings, timers=("wall",))
    assert set(timed.samples_ms) == {"wall"} and len(timed.samples_ms["wall"]) == 3
    assert [name for name, _ in timing_method(device, settings, reference, ("wall",)).timers] == ["wall"]


def test_a_baseline_held_for_the_outside_clocks_calibration_waits_inside_its_timed_calls():
    from kforge_core.devices import make_device
    from kforge_core.harness.worker.baselines import measure_baselines
    from kforge_core.harness.worker.reference import reference_data

    from .helpers import TORCH_CPU, problem

    device = make_device(TORCH_CPU)
    settings = HarnessSettings(warmup=1, repetitions=3)
    reference = reference_data(problem("relu_scale"), device, settings)
    plain = measure_baselines(("eager",), reference, device, settings, runs=(0, 2), timers=("wall",))
    held = measure_baselines(("eager",), reference, device, settings, runs=(0, 2), timers=("wall",), held_ms=50.0)
    plain_ms, held_ms = (min(dict(dict(found.figures)["eager"])["wall"]) for found in (plain, held))
    assert held_ms >= 50.0 and plain_ms < held_ms  # the 50 ms are in the held figure, not in the plain one


def test_the_baselines_wrap_one_model_so_its_weights_are_held_once(monkeypatch):
    from kforge_core.devices import make_device
    from kforge_core.harness.worker import baselines
    from kforge_core.harness.worker.reference import reference_data

    from .helpers import TORCH_CPU, problem

    compiled = []

    def compile_(model):  # Inductor's build is not what is tested: which model it is given is
        compiled.append(model)
        return model

    monkeypatch.setattr(baselines.torch, "compile", compile_)
    device = make_device(TORCH_CPU)
    settings = HarnessSettings(warmup=1, repetitions=3)
    reference = reference_data(problem("linear_relu"), device, settings)
    found = baselines.measure_baselines(("eager", "compile"), reference, device, settings, runs=(0, 1),
                                        timers=("wall",))
    assert {name for name, _ in found.figures} == {"eager", "compile"}
    assert compiled == [baselines._baseline("eager", reference)]  # the eager baseline's own model, not a second


def test_the_call_length_is_the_shortest_call_the_kforge_process_saw_begin():
    calls = CallLog()
    assert calls.call_ms() is None
    for label, start, end in (("trial 0", 0.0, 0.5), ("trial 1", 1.0, 1.04), ("trial 2", 2.0, 2.05)):
        calls.mark(label, True, start)
        calls.mark(label, False, end)
    assert calls.call_ms() == pytest.approx(40.0)  # the first call's build (500 ms) does not set it
    # judged ahead: the next trial's start mark waited while the one before was judged, and was read 48 ms late
    calls.mark("trial 3", True, 3.048, read_late=True)
    calls.mark("trial 3", False, 3.05)
    assert calls.call_ms() == pytest.approx(40.0)  # 2 ms by this clock: the call began before its interval did
    calls.mark("forward (traced for the operators it runs)", True, 4.0)  # the tracer's Python slows it
    calls.mark("forward (traced for the operators it runs)", False, 5.0)
    assert calls.call_ms("forward (traced") == pytest.approx(1000.0)
    assert calls.call_ms("trial") == pytest.approx(40.0)  # the trials' calls alone, where there are some
    assert calls.call_ms("nothing so named") == pytest.approx(40.0)  # every call where none is so named
    calls.take()
    for seed in range(3):  # every start read late: each interval is shorter than its call, the longest the nearest
        calls.mark("trial", True, seed + 0.01 * seed, read_late=True)
        calls.mark("trial", False, seed + 0.03)
    assert calls.call_ms("trial") == pytest.approx(30.0)
    calls.take()
    assert calls.call_ms() is None


def test_the_window_says_how_many_runs_it_made():
    workers = FakeWorkers({"candidate": 1.0, "eager": 4.0})
    window = measure_window(8, ("eager",), {}, workers.candidate, workers.baseline)
    assert window.candidate.method.repetitions == 8 and window.baselines.method.repetitions == 8
    assert len(window.candidate.samples_ms) == 8


def test_the_medians_interval_holds_at_95_percent_from_the_order_statistics():
    assert median_interval([]) == (0.0, 0.0, 0.0)
    runs = [float(v) for v in range(1, 21)]  # 20 runs: the 6th smallest to the 6th largest, 95.9%
    low, high, level = median_interval(runs)
    assert (low, high) == (6.0, 15.0) and level == pytest.approx(0.9586, abs=1e-4)
    low, high, level = median_interval([float(v) for v in range(8)])  # 8 runs: the fastest to the slowest, 99.2%
    assert (low, high) == (0.0, 7.0) and level == pytest.approx(0.9922, abs=1e-4)
    assert median_interval([3.0, 1.0, 2.0, 5.0, 4.0])[2] == pytest.approx(0.9375)  # 5 runs cannot reach 95%
    stats = RuntimeStats.from_samples(runs)
    assert (stats.low, stats.high) == (6.0, 15.0)


def test_a_speedups_interval_puts_both_intervals_at_their_extremes():
    assert speedup_interval((4.0, 5.0), (1.0, 2.0)) == (2.0, 5.0)
    assert speedup_interval((0.0, 0.0), (1.0, 2.0)) is None


def test_a_verdict_gives_the_interval_of_a_speedup_of_medians_only():
    from dataclasses import replace

    from kforge_core.harness.verdict import Verdict

    candidate = RuntimeStats.from_samples([float(v) for v in range(1, 21)])  # median 10.5, 6..15
    eager = RuntimeStats.from_samples([float(v) for v in range(21, 41)])  # median 30.5, 26..35
    verdict = Verdict.__new__(Verdict)
    object.__setattr__(verdict, "runtime", candidate)
    object.__setattr__(verdict, "baselines", (("eager", eager),))
    assert verdict.speedup_interval("eager") == pytest.approx((26 / 15, 35 / 6))
    assert verdict.speedup_interval("compile") is None
    object.__setattr__(verdict, "runtime", replace(candidate, statistic="min"))
    assert verdict.speedup_interval("eager") is None


def test_a_slow_candidate_is_timed_eight_times_a_fast_one_as_often_as_asked(cache_dir):
    from kforge_core.harness import Harness

    from .helpers import SELECTION, TORCH_CPU, candidate, problem, settings_for

    # 240 ms of each callable's time: 8 runs of a 30 ms call or longer, and 12 of one of 20 ms or less (the fast
    # candidate's trials take a few ms by the KForge process's clock, 11 ms on this machine under load). The slow
    # one sleeps 50 ms. Five trials, as by default: from the third on, each starts while the one before is judged
    settings = settings_for(cache_dir, repetitions=12, timing_target_ms=240, spare_workers=0, trials=5)
    with Harness(backend=TORCH_CPU, problem=problem("relu_scale"), plugins=SELECTION, settings=settings) as harness:
        slow = harness.evaluate(candidate("slow_relu_scale"))
        fast = harness.evaluate(candidate("relu_scale_numpy"))
    assert slow.correct and fast.correct, (slow.message, fast.message)
    assert slow.method.repetitions == 8 and slow.runtime.count == 8
    assert "8 timed runs, not 12: in proportion to the candidate's calls of" in slow.method.notes
    assert "timing_target_ms: 240 ms" in slow.method.notes
    # every trial's start noted by the KForge process as the call began, even where it was judging the trial before
    # (noted as it was read, the trials judged ahead came out at 0.04 ms, and so did their median); the KForge
    # process wakes to a mark a little after it arrives, more on a loaded host (49.6 ms for the 50 ms call, once)
    called = float(re.search(r"calls of ([\d.]+) ms in verification", slow.method.notes).group(1))
    assert called >= 40, slow.method.notes
    assert dict(slow.baselines)["eager"].count == 8  # the baselines are timed as many times, beside it
    assert fast.method.repetitions == 12 and fast.runtime.count == 12
    assert slow.runtime.level > 0.95 and slow.runtime.low <= slow.runtime.median <= slow.runtime.high
    # on the host CPU the speedup is a ratio of fastest runs: the medians' intervals say nothing of it
    assert slow.statistic == "min" and slow.speedup_interval("eager") is None


def test_the_verdict_says_why_a_long_call_was_timed_fewer_times_and_where_the_device_clock_only_guarded():
    from kforge_core.harness.host.baselines_window import _proportion_words

    settings = HarnessSettings(timer="events")
    words = _proportion_words(8, ("events", "device"), 40.0, settings, "events")
    assert words.startswith("8 timed runs, not 20: in proportion to the candidate's calls of 40 ms")
    assert "timed under events and device alone" in words
    assert "the device's own clock on the first 2 runs of each callable only, beside events as its guard" in words
    assert "guard" not in _proportion_words(8, ("wall",), 40.0, HarnessSettings(), "wall")
    assert _proportion_words(20, (), 1.0, settings, "events") == ""
