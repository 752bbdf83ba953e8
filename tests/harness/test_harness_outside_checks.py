"""Nothing on the candidate's word: its timed figures against the KForge process's own clock, and checks of its
timed calls that nothing in its process chooses (cpu backend; the attacks that fooled the harness before)."""

from __future__ import annotations

import pytest

from kforge_core.harness import flags as F
from kforge_core.harness.host.outside_clock import Interval, Overhead, TimedBlock, calibration, judge
from kforge_core.records import Failure

from kforge_core.harness.host.harness import Harness

from .helpers import SELECTION, TORCH_CPU, candidate, problem, settings_for


@pytest.fixture(scope="module")
def timed_harness(cache_dir):
    # twenty timed runs however long a call takes on a busy machine, and eager beside them: the outside clock's
    # overhead is measured on its calls
    with Harness(backend=TORCH_CPU, problem=problem("relu_scale"), plugins=SELECTION,
                 settings=settings_for(cache_dir, repetitions=20, timing_target_ms=0,
                                       baselines=("eager",))) as harness:
        yield harness


def codes(verdict) -> dict[str, bool]:
    return {flag.code: flag.blocking for flag in verdict.flags}


def test_a_timer_replaced_on_the_devices_class_is_contradicted_by_the_outside_clock(timed_harness):
    verdict = timed_harness.evaluate(candidate("timer_class_patch"))
    assert verdict.failure is Failure.CHEAT, verdict.message
    assert codes(verdict)[F.TIMING_MISMATCH] is True
    wall = next(f for f in verdict.outside_clock if f.timer == "wall")
    assert wall.worker_ms < 0.01 and wall.outside_ms > 50.0, wall  # it sleeps 100 ms a call and says 1 us
    assert wall.held_ms == 100.0  # judged again beside baseline calls held as long (at most 100 ms), to no avail
    mismatch = next(f for f in verdict.flags if f.code == F.TIMING_MISMATCH)
    assert f"{wall.worker_ms:.4g} ms" in mismatch.message and f"{wall.outside_ms:.4g} ms" in mismatch.message
    tampering = next(f for f in verdict.flags if f.code == F.TAMPERING)  # the class's tripwire, besides
    assert "CpuDevice.start_timer" in tampering.message or "Device.start_timer" in tampering.message
    assert verdict.runtime is None and verdict.speedups == ()


def test_timed_calls_are_all_checked_whatever_the_candidate_does_to_the_draw(timed_harness):
    verdict = timed_harness.evaluate(candidate("lazy_timed_runs"))
    assert verdict.verify is not None and verdict.verify.correct, verdict.message  # its trials are answered
    assert verdict.failure is Failure.CHEAT, verdict.message
    assert codes(verdict)[F.CACHED_OUTPUT] is True
    cached = next(f for f in verdict.flags if f.code == F.CACHED_OUTPUT)
    assert "and 9 more of the 20 timed calls" in cached.message  # half of them, every one looked at


def test_one_garbage_call_cannot_become_the_fastest_run(timed_harness):
    for _ in range(2):  # before, it escaped the checks in 17 of 20 evaluations and was the headline
        verdict = timed_harness.evaluate(candidate("one_garbage_run"))
        assert verdict.failure is Failure.CHEAT, verdict.message
        assert codes(verdict)[F.CACHED_OUTPUT] is True
        assert "timed run" in verdict.message


def test_an_honest_candidate_agrees_with_the_outside_clock(timed_harness):
    verdict = timed_harness.evaluate(candidate("relu_scale_numpy"))
    assert verdict.correct, verdict.message
    wall = next(f for f in verdict.outside_clock if f.timer == "wall")
    assert wall.calls == 20 and not wall.contradiction and wall.overhead_ms > 0


# ------------------------------------------------------------------------------------------------ the arithmetic


def _block(samples, intervals, timer="wall"):
    suffix = "" if timer == "wall" else " (events)"
    return TimedBlock(0, {timer: samples}, tuple(Interval(f"timed run {i}{suffix}", ms)
                                                 for i, ms in enumerate(intervals)))


def test_the_overhead_is_what_the_outside_clock_adds_to_the_baselines_calls():
    overhead = calibration([_block([1.0, 2.0, 3.0, 4.0, 5.0], [1.5, 2.6, 3.5, 4.7, 45.0])])  # one call held up
    assert overhead.median_ms["wall"] == pytest.approx(0.6)
    assert overhead.most_ms["wall"] == pytest.approx(40.0) and overhead.calls["wall"] == 5
    assert calibration([]) is None


def test_a_figure_shorter_than_the_outside_clock_allows_is_contradicted():
    overhead = Overhead({"wall": 0.4}, {"wall": 0.5}, {"wall": 20})
    honest = judge([_block([2.0] * 10, [2.52] * 10)], overhead, "median")[0]
    assert not honest.contradiction and honest.outside_ms == pytest.approx(2.02)
    shaved = judge([_block([1.7] * 10, [2.52] * 10)], overhead, "min")[0]  # 16% under: beyond the 10% slack
    assert "1.7 ms" in shaved.contradiction and "2.02 ms" in shaved.contradiction
    forty = Overhead({"wall": 0.4}, {"wall": 0.5}, {"wall": 40})  # as by default: 20 calls against 40, the median
    held_up = judge([_block([2.0] * 20, [2.52] * 8 + [30.0] * 12)], forty, "median")[0]
    assert held_up.contradiction  # most calls 28 ms longer than their figures: more than any baseline call was
    busy = Overhead({"wall": 0.4}, {"wall": 29.0}, {"wall": 40})  # ... unless a baseline call was held up as long
    assert not judge([_block([2.0] * 20, [2.52] * 8 + [30.0] * 12)], busy, "median")[0].contradiction


def test_with_fewer_calls_the_bound_starts_from_a_shorter_interval():
    from kforge_core.harness.host.outside_clock import bounding_interval

    twenty = [float(v) for v in range(1, 21)]
    assert bounding_interval(twenty, 40) == (10.5, "a median")  # the default: 2.5 in a million from the median
    assert bounding_interval(twenty, 20) == (7.0, "the 7th shortest")
    assert bounding_interval([float(v) for v in range(1, 9)], 8) == (1.0, "the shortest")
    overhead = Overhead({"wall": 0.4}, {"wall": 0.5}, {"wall": 8})
    # an honest 30 ms call timed 8 times on a busy host: four of its calls woke late, more than any baseline call
    honest = judge([_block([30.0] * 8, [30.5] * 4 + [36.0] * 4)], overhead, "median")[0]
    assert not honest.contradiction and honest.outside_ms == pytest.approx(30.0)
    faked = judge([_block([1.0] * 8, [30.5] * 8)], overhead, "median")[0]  # a timer that says 1 ms
    assert "the shortest 30.5 ms between the marks" in faked.contradiction


def _timing(figures):
    from types import SimpleNamespace

    from kforge_core.harness.protocol import TimingOutcome

    return TimingOutcome(tuple(figures), SimpleNamespace(statistic="median"), figures=(("wall", tuple(figures)),))


def test_long_calls_that_look_contradicted_are_judged_again_beside_baseline_calls_held_as_long():
    from kforge_core.harness.host.outside_clock import LONGEST_HOLD_MS, check_candidate
    from kforge_core.settings import HarnessSettings

    # as measured on a 2-core machine under four spinning processes: 30 ms calls that came back 6-18 ms late,
    # beside baseline calls of 0.05 ms that had 0.3 ms added (the KForge process had hardly waited through them)
    late = [17.6, 17.0, 9.4, 17.0, 6.2, 17.6, 6.1, 17.0]
    calls = [Interval(f"timed run {i}", 30.3 + extra) for i, extra in enumerate(late)]
    baselines = [_block([0.05] * 8, [0.32] * 8)]
    asked: list[float] = []

    def held_calls(held_ms: float) -> list[TimedBlock]:  # held as long, they came back as late
        asked.append(held_ms)
        return [_block([held_ms + 0.05] * 8, [held_ms + 0.05 + extra for extra in [0.3] * 4 + [13.5, 17.7] * 2])]

    figures, flags = check_candidate(_timing([30.3] * 8), calls, baselines, HarnessSettings())
    assert flags and flags[0].code == "timing_mismatch"  # the window's short calls alone: it looks like a lie
    figures, flags = check_candidate(_timing([30.3] * 8), calls, baselines, HarnessSettings(), held_calls)
    assert not flags and asked == [pytest.approx(30.3 + 17.0)]  # held as long as the candidate's median call
    assert figures[0].held_ms == pytest.approx(47.3) and figures[0].overhead_ms == pytest.approx(17.7)
    assert "baseline calls held 47.3 ms among them" in figures[0].describe()
    figures, flags = check_candidate(_timing([1.0] * 8), calls, baselines, HarnessSettings(), held_calls)
    assert flags and "8 baseline calls beside it or 8 held 47.3 ms, as long as the" in figures[0].contradiction
    asked.clear()
    quiet = [Interval(f"timed run {i}", 30.6) for i in range(8)]
    figures, flags = check_candidate(_timing([30.3] * 8), quiet, baselines, HarnessSettings(), held_calls)
    assert not flags and not asked and figures[0].held_ms == 0.0  # nothing looked wrong: nothing held
    long = [Interval(f"timed run {i}", 900.0) for i in range(8)]
    check_candidate(_timing([10.0] * 8), long, baselines, HarnessSettings(), held_calls)
    assert asked == [LONGEST_HOLD_MS]
    figures, flags = check_candidate(_timing([30.3] * 8), calls, baselines, HarnessSettings(), lambda ms: [])
    assert flags  # no held call could be timed: the window's calls decide


def test_too_few_calls_give_no_lower_bound():
    few = Overhead({"wall": 0.4}, {"wall": 0.5}, {"wall": 3})
    found = judge([_block([0.001] * 10, [5.0] * 10)], few, "median")[0]
    assert not found.contradiction and "bounded from above only: 3 timed calls" in found.note
    enough = Overhead({"wall": 0.4}, {"wall": 0.5}, {"wall": 20})
    assert "bounded from above only: 4" in judge([_block([0.001] * 4, [5.0] * 4)], enough, "median")[0].note


def test_a_figure_longer_than_its_call_is_impossible_on_every_timer():
    for timer in ("wall", "events"):
        found = judge([_block([1.0, 3.0], [2.0, 2.0], timer)], None, "median")[0]
        assert "1 of the worker's" in found.contradiction and "3 ms in 2 ms" in found.contradiction


def test_figures_for_calls_nobody_saw_are_contradicted():
    found = judge([_block([1.0, 1.0, 1.0], [1.5, 1.5])], None, "median")[0]
    assert "3 wall figures for the 2 calls" in found.contradiction


def test_without_baselines_the_wall_figure_is_bounded_from_above_only():
    found = judge([_block([0.001] * 4, [5.0] * 4)], None, "median")[0]
    assert not found.contradiction and "not calibrated" in found.note
