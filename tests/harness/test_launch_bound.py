"""A timer whose figure counted the host's launch (no hold, or a launch past it) on either side of a comparison is
taken at its fastest run on both sides; the other timers keep the device's statistic."""

from __future__ import annotations

from kforge_core.harness.host.baselines_window import Window
from kforge_core.harness.host.evaluation import StageOutcomes
from kforge_core.harness.host.verdict_parts import baselines_beside, figures_of, launch_bound_of, runtime_of
from kforge_core.harness.protocol import BaselineResults, TimingOutcome
from kforge_core.harness.verdict import TimingMethod
from kforge_core.timing import launch_bound

# the same call on both sides, timed in a slow second and a fast one: 4 runs at 20 ms, then 3 at 10 ms on one side,
# 3 slow and 4 fast on the other; the medians differ by 2x, the fastest runs agree
SLOW_FIRST = (20.0, 20.0, 20.0, 20.0, 10.0, 10.0, 10.0)
FAST_FIRST = (10.0, 10.0, 10.0, 10.0, 20.0, 20.0, 20.0)
DEVICE = (5.0, 5.0, 6.0, 6.0, 6.0, 9.0, 9.0)  # the device's own clock: not launch-bound


def _method(headline: str = "events") -> TimingMethod:
    return TimingMethod("cuda:0", 1, 7, 0, "", "", True, notes="pool", headline=headline)


def _outcomes(candidate_bound: tuple[str, ...], headline: str = "events") -> StageOutcomes:
    figures = (("events", SLOW_FIRST), ("device", DEVICE))
    return StageOutcomes(timing=TimingOutcome(dict(figures)[headline], _method(headline), figures=figures,
                                              launch_bound=candidate_bound))


def _window(baseline_bound: tuple[str, ...], headline: str = "events") -> Window:
    figures = (("events", FAST_FIRST), ("device", DEVICE))
    results = BaselineResults((("eager", dict(figures)[headline]),), (), _method(headline),
                              figures=(("eager", figures),),
                              launch_bound=(("eager", baseline_bound),) if baseline_bound else ())
    return Window(baselines=results)


def _speedups(candidate_bound: tuple[str, ...], baseline_bound: tuple[str, ...], headline: str = "events"):
    out, window = _outcomes(candidate_bound, headline), _window(baseline_bound, headline)
    runtime, method = runtime_of(out, window)
    bound = launch_bound_of(out.timing, window)
    figures = dict(figures_of(out, bound))
    _, speedups, baseline_figures = baselines_beside(window, runtime, out.timing, bound)
    by_timer = {timer: stats.figure for timer, stats in dict(baseline_figures)["eager"]}
    return runtime, method, figures, dict(speedups)["eager"], by_timer


def test_launch_bound_events_on_either_side_are_taken_at_their_fastest_run_on_both():
    for candidate_bound, baseline_bound in ((("events",), ()), ((), ("events",)), (("events",), ("events",))):
        runtime, method, figures, speedup, baseline = _speedups(candidate_bound, baseline_bound)
        assert runtime.statistic == "min" and runtime.figure == 10.0 and method.statistic == "min"
        assert speedup == 1.0 and baseline["events"] == 10.0
        assert figures["events"].figure == 10.0 and figures["device"].figure == 6.0  # the device's: the median
        assert baseline["device"] == 6.0
        assert "events: the figure counted the host's launch on" in method.notes and method.notes.startswith("pool")
    runtime, method, *_ = _speedups(("events",), ("events",))
    assert "on the candidate's side and the eager baseline's" in method.notes


def test_without_a_launch_bound_figure_the_median_stands():
    runtime, method, figures, speedup, baseline = _speedups((), ())
    assert runtime.statistic == "median" and runtime.figure == 20.0 and method.notes == "pool"
    assert speedup == 0.5 and figures["events"].figure == 20.0


def test_a_launch_bound_timer_beside_the_headline_leaves_the_headline_alone():
    runtime, method, figures, speedup, baseline = _speedups(("events",), (), headline="device")
    assert runtime.statistic == "median" and method.statistic == "median" and speedup == 1.0
    assert figures["events"].statistic == "min" and baseline["events"] == 10.0
    assert "events: the figure counted the host's launch on the candidate's side" in method.notes


def test_the_timers_and_the_note():
    assert launch_bound.launch_bound_timers((), [("eager", ("events",)), ("compile", ())]) == ("events",)
    assert launch_bound.statistic_of("wall", "median", ("events",)) == "median"
    assert launch_bound.note((), [("compile", ())]) == ""
