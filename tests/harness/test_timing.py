"""Timing without processes: which timer gives the headline, the interleaving of the candidate's and the baselines'
timed runs, the baseline cache as a prior that a fresh measurement confirms or not, the cache key's method, the
verdict's figures, and how reports name the method and the baselines' source."""

from __future__ import annotations

import dataclasses
import time

import pytest

from kforge_core.harness.host.baseline_cache import BaselineCache, BaselineKey
from kforge_core.harness.host.baselines_window import PRIOR_BAND, Prior, blocks, confirms, measure_window
from kforge_core.harness.protocol import BaselineResults, DeviceFacts, Reply, TimingOutcome
from kforge_core.timing.headline import headline_timer
from kforge_core.harness.verdict import BaselineSource, RuntimeStats, TimingMethod, Verdict
from kforge_core.records import CompileResult, Failure
from kforge_core.settings import HarnessSettings
from kforge_core.timing.findings import launch_overhead_finding, launch_overhead_share

METHOD = TimingMethod(device="toy", warmup=1, repetitions=8, l2_flush_bytes=0, synchronize="s", timer="t",
                      fresh_inputs=True, headline="wall", timers=(("wall", "w"), ("events", "e")))


class FakeWorkers:
    """The candidate's and the baseline worker's answers, each baseline's runs taking ``ms[name]``."""

    def __init__(self, ms: dict[str, float], fail: str = "") -> None:
        self.ms, self.fail, self.asked = ms, fail, []

    def candidate(self, block):
        self.asked.append(("candidate", block))
        runs = block[1] - block[0]
        if self.fail == "candidate":
            return Reply(failure=Failure.TIMEOUT, message="timing: hung")
        figures = (("wall", (self.ms["candidate"],) * runs), ("events", (self.ms["candidate"] / 2,) * runs))
        return Reply(value=TimingOutcome(figures[0][1], METHOD, (), (), figures))

    def baseline(self, name, block):
        self.asked.append((name, block))
        if self.fail == name:
            return Reply(failure=Failure.CRASH, message=f"{name} baseline failed: crashed")
        runs = block[1] - block[0]
        figures = (("wall", (self.ms[name],) * runs), ("events", (self.ms[name] / 2,) * runs))
        return Reply(value=BaselineResults(((name, figures[0][1]),), (), METHOD, figures=((name, figures),)))


def test_the_asked_timer_is_the_headline_and_a_device_without_it_falls_back_to_wall_with_a_note():
    assert headline_timer("events", ("wall", "events")) == ("events", "")
    assert headline_timer("device", ("wall", "events", "device")) == ("device", "")
    timer, note = headline_timer("device", ("wall",))
    assert timer == "wall" and "no device timer" in note
    with pytest.raises(ValueError, match="unknown timer"):
        headline_timer("cycles", ("wall",))
    with pytest.raises(ValueError, match="harness.timer"):
        HarnessSettings(timer="cycles")


def test_the_cpu_offers_only_the_wall_clock():
    from kforge_core.devices import make_device
    from kforge_core.records import Backend

    device = make_device(Backend(name="c", programming_model="PyTorch", device="cpu"))
    assert device.timers == ("wall",)
    with pytest.raises(ValueError, match="no event timer"):
        device.start_events()
    with pytest.raises(ValueError, match="no device timer"):
        device.device_clock()


def test_timed_runs_are_split_in_even_blocks():
    assert blocks(20) == [(0, 5), (5, 10), (10, 15), (15, 20)]
    assert blocks(6) == [(0, 2), (2, 3), (3, 4), (4, 6)]
    assert blocks(2) == [(0, 1), (1, 2)] and blocks(1) == [(0, 1)]


def test_candidate_and_baselines_take_turns_block_by_block():
    workers = FakeWorkers({"candidate": 1.0, "eager": 4.0, "compile": 2.0})
    window = measure_window(8, ("eager", "compile"), {}, workers.candidate, workers.baseline)
    assert workers.asked == window.order == [
        ("candidate", (0, 2)), ("eager", (0, 2)), ("compile", (0, 2)),
        ("candidate", (2, 4)), ("eager", (2, 4)), ("compile", (2, 4)),
        ("candidate", (4, 6)), ("eager", (4, 6)), ("compile", (4, 6)),
        ("candidate", (6, 8)), ("eager", (6, 8)), ("compile", (6, 8)),
    ]
    assert len(window.candidate.samples_ms) == 8 and dict(window.candidate.figures)["events"] == (0.5,) * 8
    assert dict(window.baselines.samples_ms) == {"eager": (4.0,) * 8, "compile": (2.0,) * 8}
    assert [(s.baseline, s.origin, s.prior) for s in window.sources] == [("eager", "measured", ""),
                                                                         ("compile", "measured", "")]
    assert set(window.measured) == {"eager", "compile"}  # both kept as the next window's priors


def test_the_device_says_in_how_many_blocks_the_runs_take_turns():
    # on the host CPU, whose load changes within a second, shorter blocks: a quiet stretch reaches every callable
    from kforge_core.device import Device
    from kforge_core.devices.cpu import CpuDevice

    assert Device.timing_blocks == 4 and CpuDevice.timing_blocks == 10
    workers = FakeWorkers({"candidate": 1.0, "eager": 4.0})
    window = measure_window(20, ("eager",), {}, workers.candidate, workers.baseline, count=CpuDevice.timing_blocks)
    assert window.order[:4] == [("candidate", (0, 2)), ("eager", (0, 2)), ("candidate", (2, 4)), ("eager", (2, 4))]
    assert len(window.order) == 20 and len(window.candidate.samples_ms) == 20


def test_a_prior_confirmed_within_the_band_stands_once_the_outside_clock_has_its_calls():
    """20 runs in blocks of 5: the prior is judged after the second block, the first that gives the baseline the 8
    calls the outside clock's lower bound of a candidate's wall figure needs (``MIN_CALLS``); with 8 runs, only the
    last block gives them, and the prior saves nothing."""
    workers = FakeWorkers({"candidate": 1.0, "eager": 4.0 * (1 + PRIOR_BAND / 2), "compile": 2.0})
    prior = Prior((("wall", (4.0,) * 8), ("events", (2.0,) * 8)), 1000.0, "the baseline cache")
    window = measure_window(20, ("eager", "compile"), {"eager": prior}, workers.candidate, workers.baseline)
    assert [what for what, _ in window.order].count("eager") == 2  # a short fresh measurement, 10 calls
    assert [what for what, _ in window.order].count("compile") == 4
    assert dict(window.baselines.samples_ms)["eager"] == (4.0,) * 8  # the prior's full figure stands
    eager = window.sources[0]
    assert (eager.origin, eager.prior, eager.measured_at) == ("confirmed", "the baseline cache", 1000.0)
    assert f"{4.0 * (1 + PRIOR_BAND / 2):.3g} ms over 10 runs vs 4 ms" in eager.detail
    assert "eager" not in window.measured
    window = measure_window(8, ("eager",), {"eager": prior}, workers.candidate, workers.baseline)
    assert [what for what, _ in window.order].count("eager") == 4 and window.sources[0].origin == "confirmed"


def test_a_prior_the_fresh_measurement_does_not_confirm_is_measured_again_in_full():
    workers = FakeWorkers({"candidate": 1.0, "eager": 4.0 * (1 + 3 * PRIOR_BAND), "compile": 2.0})
    prior = Prior((("wall", (4.0,) * 8),), 1000.0, "the baseline cache")
    window = measure_window(8, ("eager",), {"eager": prior}, workers.candidate, workers.baseline, now=lambda: 2000.0)
    assert [what for what, _ in window.order].count("eager") == 4
    assert dict(window.baselines.samples_ms)["eager"] == (4.0 * (1 + 3 * PRIOR_BAND),) * 8
    (source,) = window.sources
    assert (source.origin, source.measured_at) == ("remeasured", 2000.0)
    assert "did not hold" in source.describe() and "re-measured" in source.short()
    assert "eager" in window.measured


def test_a_prior_stands_only_where_every_timer_the_fresh_runs_had_confirms_it():
    # its headline figure agrees, its events figure is 30% off: standing, that figure would move every events
    # speedup of the problem by as much, unchecked
    workers = FakeWorkers({"candidate": 1.0, "eager": 4.0})
    prior = Prior((("wall", (4.0,) * 8), ("events", (2.0 * (1 + 10 * PRIOR_BAND),) * 8)), 1000.0, "the baseline cache")
    window = measure_window(8, ("eager",), {"eager": prior}, workers.candidate, workers.baseline, now=lambda: 2000.0)
    (source,) = window.sources
    assert source.origin == "remeasured" and dict(window.baselines.figures)["eager"][1] == ("events", (2.0,) * 8)
    assert "fresh events median 2 ms over 8 runs vs 2.6 ms" in source.detail, source.detail
    assert "fresh median 4 ms" in source.detail  # the headline's, first


def test_a_prior_says_in_words_where_and_how_long_before_it_was_measured():
    workers = FakeWorkers({"candidate": 1.0, "eager": 4.0})
    prior = Prior((("wall", (4.0,) * 8), ("events", (2.0,) * 8)), 1000.0,
                  "the timing of an earlier candidate in this command")
    window = measure_window(8, ("eager",), {"eager": prior}, workers.candidate, workers.baseline,
                            now=lambda: 1000.0 + 31 * 60, band=0.25)
    (source,) = window.sources
    assert (source.origin, source.band, source.checked_at) == ("confirmed", 0.25, 1000.0 + 31 * 60)
    assert source.short().startswith("eager from the timing of an earlier candidate in this command (")
    assert source.short().endswith(", 31 min earlier), confirmed now")
    assert ", 31 min earlier; confirmed now by a short measurement beside the candidate within ±25%" in \
        source.describe()


def test_a_prior_measured_under_fewer_timers_cannot_stand_for_a_window_of_more():
    # a long call's window timed the headline alone; a later one of every timer needs them all measured now
    workers = FakeWorkers({"candidate": 1.0, "eager": 4.0})
    prior = Prior((("wall", (4.0,) * 8),), 1000.0, "the baseline cache")
    window = measure_window(8, ("eager",), {"eager": prior}, workers.candidate, workers.baseline)
    (source,) = window.sources
    assert source.origin == "remeasured" and "no prior figure for the events timer" in source.describe()
    assert set(dict(dict(window.baselines.figures)["eager"])) == {"wall", "events"}


def test_confirms_compares_medians_within_the_band():
    assert confirms((1.05, 1.0, 0.5), (1.0,), 0.1) and not confirms((1.2,), (1.0,), 0.1)
    assert not confirms((), (1.0,)) and not confirms((1.0,), ())


def test_a_failing_candidate_ends_the_window_and_a_failing_baseline_is_reported():
    workers = FakeWorkers({"candidate": 1.0, "eager": 4.0}, fail="candidate")
    window = measure_window(8, ("eager",), {}, workers.candidate, workers.baseline)
    assert window.failure is not None and window.failure.failure is Failure.TIMEOUT and workers.asked == [
        ("candidate", (0, 2))]
    workers = FakeWorkers({"candidate": 1.0, "eager": 4.0, "compile": 2.0}, fail="compile")
    window = measure_window(8, ("eager", "compile"), {}, workers.candidate, workers.baseline)
    assert dict(window.baselines.errors) == {"compile": "compile baseline failed: crashed"}
    assert [name for name, _ in window.baselines.samples_ms] == ["eager"]
    assert [what for what, _ in window.order].count("compile") == 1


def test_the_cache_key_includes_the_timer_and_keeps_every_timers_figures(tmp_path):
    facts = DeviceFacts("toy", "Toy T1", 0, "2.x", 1)
    wall, events = (HarnessSettings(timer=t) for t in ("wall", "events"))
    key_wall = BaselineKey.of("p1", facts, wall, host_cpu=False)
    key_events = BaselineKey.of("p1", facts, events, host_cpu=False)
    assert key_wall != key_events and key_wall.file_name != key_events.file_name
    cache = BaselineCache(tmp_path)
    figures = (("wall", (3.0, 4.0)), ("events", (1.0, 2.0)))
    cache.write(key_wall, {"eager": (figures, METHOD)}, at=1234.0)
    (kept,) = cache.read(key_wall).baselines.values()
    assert kept.figures == figures and kept.samples_ms == (3.0, 4.0) and kept.measured_at == 1234.0
    assert cache.read(key_events).baselines == {}  # the other timer's key finds nothing


def _verdict(**changes) -> Verdict:
    stats = RuntimeStats.from_samples
    base = dict(
        candidate="c.py", candidate_digest="d", backend="toy", problem="p", compile=CompileResult(ok=True),
        verify=None, runtime=stats([1.0]), baselines=(("eager", stats([4.0])),), speedups=(("eager", 4.0),),
        flags=(), failure=None, message="", method=METHOD, profile=None, stdout="", stderr="", worker_replaced=False,
        figures=(("wall", stats([1.0])), ("events", stats([0.25]))),
        baseline_figures=(("eager", (("wall", stats([4.0])), ("events", stats([2.0])))),),
        baseline_sources=(BaselineSource("eager", "confirmed", time.time(), "the baseline cache", "fresh", 0.1),),
    )
    return Verdict(**{**base, **changes})


def test_the_verdict_carries_every_timers_figures_and_speedups_and_their_source():
    verdict = _verdict()
    assert verdict.timer == "wall"
    assert verdict.speedups_by_timer == {"wall": {"eager": 4.0}, "events": {"eager": 8.0}}
    document = verdict.to_json()
    assert document["timer"] == "wall" and set(document["figures"]) == {"wall", "events"}
    assert document["baseline_sources"][0]["origin"] == "confirmed"
    assert Verdict.from_json(document) == verdict
    old = {k: v for k, v in document.items() if k not in ("figures", "baseline_figures", "baseline_sources")}
    assert Verdict.from_json(old).figures == ()  # documents written before timers were recorded still read


def test_every_report_names_the_timer_and_the_baselines_source(tmp_path):
    from rich.console import Console

    from kforge_core.bench.report import _problems
    from kforge_core.bench.slot import result_of
    from kforge_core.bench.summary import summarize
    from kforge_core.store.attempts import Outcome

    verdict = _verdict(method=dataclasses.replace(METHOD, headline="events"))
    outcome = Outcome.from_verdict(verdict)
    assert outcome.timer == "events" and outcome.figures_ms == (("wall", 1.0), ("events", 0.25))
    assert outcome.baseline_sources[0].startswith("eager from the baseline cache (")
    assert outcome.baseline_sources[0].endswith("), confirmed now")
    result = result_of("p", verdict, "toy", 1.0)
    table = "\n".join(_problems([result], tmp_path))
    assert "(events)" in table and "wall 1, events 0.25" in table and "confirmed now" in table
    summary = summarize([result])
    assert summary["timers"] == ["events"] and summary["baseline_origins"] == {"confirmed from a prior": 1}

    from kforge_core.commands.eval import print_verdict

    console = Console(record=True, width=200)
    print_verdict(console, verdict, None)
    text = console.export_text()
    assert "the speedups are ratios of the events timer's median (marked *)" in text and "events *" in text
    assert "baseline eager: from the baseline cache" in text and "(events time; baselines: eager from" in text


def test_the_launch_overhead_share_becomes_a_finding_when_large():
    assert launch_overhead_share((("wall", 1.0), ("device", 0.28))) == (pytest.approx(0.72), "device")
    assert launch_overhead_share((("wall", 1.0), ("events", 0.5))) == (0.5, "events")
    assert launch_overhead_share((("wall", 1.0),)) is None
    finding = launch_overhead_finding((("wall", 1.0), ("events", 0.4), ("device", 0.28)))
    assert finding.startswith("72% of this candidate's wall time is host launch overhead")
    assert "CUDA graphs or fusion" in finding
    assert launch_overhead_finding((("wall", 1.0), ("device", 0.9))) is None


class FakeProcess:
    """A worker process that records what it is sent; its replies are read by ``drain`` and ``call``."""

    def __init__(self, init, home):
        self.sent, self.pending, self.alive = [init], 1, True

    def send(self, request):
        self.sent.append(request)
        self.pending += 1

    def drain(self, timeout_s, what):
        replies, self.pending = [Reply(value=None)] * self.pending, 0
        return replies

    def call(self, request, timeout_s, what):
        self.send(request)
        self.drain(timeout_s, what)
        return Reply(value=BaselineResults((), (), METHOD))

    def kill(self):
        self.alive = False

    close = kill


def test_the_baseline_worker_gets_ready_without_being_waited_for(tmp_path):
    from kforge_core.harness.host.baseline_worker import BaselineWorker
    from kforge_core.harness.protocol import MeasureBaselines, Prepare

    from .helpers import problem

    started = []
    def start(init, home):
        started.append(FakeProcess(init, home))
        return started[-1]

    worker = BaselineWorker(lambda: "init", tmp_path, start)
    relu = problem("relu_scale")
    worker.get_ready(relu, ("eager", "compile"))
    (process,) = started
    assert process.sent == ["init", Prepare(relu), MeasureBaselines(("eager", "compile"), (0, 0))]
    assert process.pending == 3  # nothing was read: the candidate's stages go on meanwhile
    worker.wait_ready(60.0)  # before the first timed run
    assert process.pending == 0
    assert worker.time_block("eager", (0, 5), 60.0).failure is None
    assert process.sent[-1] == MeasureBaselines(("eager",), (0, 5))
    sent = len(process.sent)
    worker.get_ready(relu, ("eager",))  # the next candidate: the same worker, the problem prepared, eager built
    assert started == [process] and len(process.sent) == sent
    worker.get_ready(relu, ("eager", "compile", "other"))  # only what it was not told to build yet
    assert process.sent[-1] == MeasureBaselines(("other",), (0, 0))
    assert not any(isinstance(r, Prepare) for r in process.sent[5:])


def test_the_baseline_workers_process_starts_when_a_timed_evaluation_begins(make_harness, monkeypatch):
    # beside the referee's start and the candidate worker's: on a bench's first problem those took 7 s on an H100
    # while the baseline worker started only with the candidate's compile stage, and its start sat in timing
    from kforge_core.harness.host.baseline_worker import BaselineWorker
    from kforge_core.harness.host.pool import WorkerPool
    from kforge_core.harness.host.referee import Referee

    from .helpers import candidate

    order: list[str] = []
    for cls, name in ((BaselineWorker, "start"), (Referee, "ready"), (WorkerPool, "acquire")):
        original = getattr(cls, name)
        monkeypatch.setattr(cls, name, lambda self, *a, _o=original, _n=f"{cls.__name__}.{name}", **k:
                            (order.append(_n), _o(self, *a, **k))[1])
    harness = make_harness("relu_scale", baselines=("eager",))
    verdict = harness.evaluate(candidate("relu_scale_numpy"))
    assert verdict.correct and verdict.speedup("eager") is not None, verdict.message
    assert order.index("BaselineWorker.start") < order.index("Referee.ready") < order.index("WorkerPool.acquire")


def test_the_candidates_worker_starts_beside_the_referee_and_is_the_one_taken(make_harness, monkeypatch):
    # on an H100 a bench's first problem waited 5 s for the referee, then 4.8 s more for the candidate's worker
    from kforge_core.harness.host.pool import WorkerPool
    from kforge_core.harness.host.referee import Referee

    from .helpers import candidate

    order: list[str] = []
    for cls, name in ((WorkerPool, "start_ahead"), (Referee, "ready"), (WorkerPool, "acquire")):
        original = getattr(cls, name)
        monkeypatch.setattr(cls, name, lambda self, *a, _o=original, _n=f"{cls.__name__}.{name}", **k:
                            (order.append(_n), _o(self, *a, **k))[1])
    harness = make_harness("relu_scale")
    verdict = harness.evaluate(candidate("relu_scale_numpy"))
    assert verdict.correct, verdict.message
    assert order.index("WorkerPool.start_ahead") < order.index("Referee.ready")
    assert harness.workers_started == 2  # the referee and the worker started ahead, which was the one taken
    harness.evaluate(candidate("relu_scale_numpy"))
    assert harness.workers_started == 2  # a warm worker for the problem: none started ahead


def test_the_host_cpu_times_by_its_fastest_run_and_accelerators_by_the_median():
    """Another process can only slow a run on the host's own cores: on a busy 2-core machine a parallel Numba
    kernel's median swung between 13 and 55 ms from one evaluation to the next while its fastest run held at 12-15."""
    from kforge_core.device import Device
    from kforge_core.devices.cpu import CpuDevice

    assert CpuDevice.headline_statistic == "min" and Device.headline_statistic == "median"
    noisy = (13.0, 13.5, 55.0, 54.0, 56.0)
    by_min, by_median = RuntimeStats.from_samples(noisy, "min"), RuntimeStats.from_samples(noisy)
    assert (by_min.figure, by_median.figure) == (13.0, 54.0)
    with pytest.raises(ValueError, match="unknown statistic"):
        RuntimeStats.from_samples(noisy, "mean")


def test_a_figure_keeps_every_run_in_the_order_run_and_the_document_reads_it_back():
    """A statistic other than the one chosen, or two verdicts compared run by run, needs the runs, not a summary."""
    stats = RuntimeStats.from_samples((3.0, 1.0, 2.0), "min")
    assert stats.samples == (3.0, 1.0, 2.0) and stats.figure == 1.0
    assert RuntimeStats.from_json(stats.to_json()) == stats
    summary_only = {k: v for k, v in stats.to_json().items() if k != "samples"}  # a document written before
    assert RuntimeStats.from_json(summary_only).samples == ()


def test_a_verdicts_speedups_runtime_and_baselines_use_its_statistic_and_older_documents_read_as_medians():
    candidate, eager = RuntimeStats.from_samples((10.0, 30.0, 30.0), "min"), RuntimeStats.from_samples(
        (20.0, 24.0, 26.0), "min")
    method = dataclasses.replace(METHOD, statistic="min")
    verdict = _verdict(runtime=candidate, baselines=(("eager", eager),), speedups=(("eager", 2.0),), method=method,
                       figures=(("wall", candidate),), baseline_figures=(("eager", (("wall", eager),)),))
    assert verdict.statistic == "min" and verdict.runtime_ms == 10.0 and verdict.baselines_ms == (("eager", 20.0),)
    assert verdict.speedups_by_timer == {"wall": {"eager": 2.0}}  # 20 / 10, not 24 / 30
    again = Verdict.from_json(verdict.to_json())
    assert again.runtime.statistic == "min" and again.method.statistic == "min" and again.runtime_ms == 10.0
    older = verdict.to_json()
    del older["method"]["statistic"], older["runtime"]["statistic"]
    assert Verdict.from_json(older).runtime_ms == 30.0 and Verdict.from_json(older).statistic == "median"


def test_a_prior_is_confirmed_by_the_statistic_of_the_method():
    fresh, prior = (4.0, 9.0, 9.0), (4.1, 4.2, 4.3)
    assert confirms(fresh, prior, statistic="min") and not confirms(fresh, prior)


def test_a_caption_says_when_the_figure_is_the_fastest_run():
    from kforge_core.timing.wording import statistic_words, timer_caption

    assert timer_caption("wall", (("wall", 13.4),), "min") == "wall time, fastest run"
    assert timer_caption("events", (("wall", 1.0), ("events", 0.5))) == "events time; wall 1 ms"
    assert (statistic_words("min"), statistic_words("median")) == ("fastest run", "median")


def test_which_timers_counted_the_launch_is_carried_from_every_block_into_the_window():
    # a block whose launch outlasted its hold marks the events timer launch-bound, for the candidate and a baseline
    workers = FakeWorkers({"candidate": 1.0, "eager": 4.0, "compile": 2.0})
    candidate, baseline = workers.candidate, workers.baseline

    def marked_candidate(block):
        reply = candidate(block)
        bound = ("events",) if block[0] == 2 else ()
        return Reply(value=dataclasses.replace(reply.value, launch_bound=bound))

    def marked_baseline(name, block):
        reply = baseline(name, block)
        bound = (("eager", ("events",)),) if name == "eager" and block[0] == 4 else ()
        return Reply(value=dataclasses.replace(reply.value, launch_bound=bound))

    window = measure_window(8, ("eager", "compile"), {}, marked_candidate, marked_baseline)
    assert window.candidate.launch_bound == ("events",)
    assert window.baselines.launch_bound == (("eager", ("events",)),)


def test_a_prior_cannot_stand_for_a_figure_that_counted_the_hosts_launch():
    # the same figures as a prior that stands (above), but the fresh events runs counted the host's launch: such a
    # figure is compared at its fastest run only with one taken in the same window, so the baseline is measured again
    workers = FakeWorkers({"candidate": 1.0, "eager": 4.0})
    prior = Prior((("wall", (4.0,) * 8), ("events", (2.0,) * 8)), 1000.0, "the baseline cache")

    def marked_baseline(name, block):
        reply = workers.baseline(name, block)
        return Reply(value=dataclasses.replace(reply.value, launch_bound=((name, ("events",)),)))

    window = measure_window(8, ("eager",), {"eager": prior}, workers.candidate, marked_baseline, now=lambda: 2000.0)
    (source,) = window.sources
    assert source.origin == "remeasured", source.describe()
    assert "the fresh events figure counted the host's launch" in source.detail
    assert len(dict(window.baselines.samples_ms)["eager"]) == 8  # every block measured
    window = measure_window(8, ("eager",), {"eager": prior}, workers.candidate, workers.baseline, now=lambda: 2000.0)
    assert window.sources[0].origin == "confirmed"


def test_a_window_grows_to_the_most_runs_once_a_figure_counted_the_hosts_launch():
    # 8 runs in 4 blocks planned; the candidate's first block counted the launch: the 18 runs left go in the 3 blocks
    workers = FakeWorkers({"candidate": 1.0, "eager": 4.0})

    def marked_candidate(block):
        reply = workers.candidate(block)
        return Reply(value=dataclasses.replace(reply.value, launch_bound=("events",) if block[0] == 0 else ()))

    window = measure_window(8, ("eager",), {}, marked_candidate, workers.baseline, most=20)
    assert [block for who, block in window.order if who == "candidate"] == [(0, 2), (2, 8), (8, 14), (14, 20)]
    assert [block for who, block in window.order if who == "eager"] == [(0, 2), (2, 8), (8, 14), (14, 20)]
    assert len(window.candidate.samples_ms) == 20 and window.candidate.method.repetitions == 20
    assert "20 timed runs, grown from 8 once a figure counted the host's launch" in window.candidate.method.notes
    assert len(dict(window.baselines.samples_ms)["eager"]) == 20
    # a baseline's launch in the last block grows the window by one block; without one, nothing grows
    def marked_baseline(name, block):
        reply = workers.baseline(name, block)
        return Reply(value=dataclasses.replace(reply.value, launch_bound=((name, ("events",)),) if block[0] == 6
                                               else ()))

    window = measure_window(8, ("eager",), {}, workers.candidate, marked_baseline, most=20)
    assert [block for who, block in window.order if who == "candidate"] == [(0, 2), (2, 4), (4, 6), (6, 8), (8, 20)]
    window = measure_window(8, ("eager",), {}, workers.candidate, workers.baseline, most=20)
    assert len(window.candidate.samples_ms) == 8 and "grown" not in window.candidate.method.notes
