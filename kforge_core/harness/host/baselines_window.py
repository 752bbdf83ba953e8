"""Baselines measured beside the candidate: the timed runs are split into blocks and taken in turn (candidate,
eager, compile, candidate, eager, compile, ...), the candidate's in its worker and the baselines' in the baseline
worker (which never runs candidate code), from the same seeded input sets, so that a speedup is a ratio of two
figures taken in the same window of the machine's life.

A baseline figure measured earlier (the baseline cache, or an earlier candidate of this session) is only a prior:
the baseline still runs in the first block, and if that fresh figure (its median, or its fastest run: the method's
statistic) lies within :data:`PRIOR_BAND` of the prior's under every timer it was timed by, the prior's full figure
stands (confirmed); otherwise the baseline goes on through every block and is measured in full again (re-measured).
Every figure carries a :class:`~kforge_core.harness.verdict.BaselineSource` saying which.

A harness's :class:`BaselinesWindow` owns what the windows need from one to the next: the baseline worker (and the
one getting ready for the next problem), the priors, the baseline cache, and the last window's baselines.
"""

from __future__ import annotations

import contextlib
import dataclasses
import time
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Callable, Iterator

from ...records import Problem
from ...settings import HarnessSettings
from ...timing.headline import headline_timer
from ...timing.timed_runs import GUARD_RUNS, TRIAL_CALL_PREFIX, guard_only
from ...timing.wording import statistic_words
from .. import flags as F
from ..protocol import BaselineResults, DeviceFacts, Reply, Time, TimingOutcome
from ..verdict import BaselineSource, RuntimeStats, TimingMethod, figure_of
from .baseline_cache import BaselineCache, BaselineKey
from .baseline_builds import BaselineBuilds
from .baseline_worker import BaselineWorker
from .deadline import StageTimeouts
from .outside_clock import MIN_CALLS, CallLog, Interval, TimedBlock
from .phases import EvaluationStep, Phases
from ...devices.harness_device import timers_of
from .run_count import measured_timers, timed_runs

if TYPE_CHECKING:
    from ...device import Device

PRIOR_BAND = 0.03  # a fresh figure within ±3% of the prior's confirms the prior (under every timer)
BLOCKS = 4  # the timed runs are taken in this many blocks per callable, unless the device says otherwise

Figures = tuple[tuple[str, tuple[float, ...]], ...]  # timer -> samples


@dataclass(frozen=True)
class Prior:
    """A baseline's figures from before this window, and where they came from."""

    figures: Figures
    measured_at: float
    origin: str  # where it was measured, in words: "the baseline cache", "an earlier candidate's timing"

    def samples(self, timer: str) -> tuple[float, ...]:
        return dict(self.figures).get(timer, ())


@dataclass
class Window:
    """What one window measured: the candidate's timing (or the reply that ended it), and the baselines."""

    candidate: TimingOutcome | None = None
    failure: Reply | None = None
    baselines: BaselineResults = field(default_factory=lambda: BaselineResults((), (), None))
    sources: tuple[BaselineSource, ...] = ()
    measured: dict[str, Figures] = field(default_factory=dict)  # measured in full now (to keep as priors)
    order: list[tuple[str, tuple[int, int]]] = field(default_factory=list)  # what ran, in order
    # the baselines' blocks as their worker reported them and as the KForge process timed them: the outside
    # clock's calibration (``outside_clock.calibration``)
    baseline_blocks: list[TimedBlock] = field(default_factory=list)


def blocks(repetitions: int, count: int = BLOCKS) -> list[tuple[int, int]]:
    """The timed runs ``0..repetitions`` in ``count`` blocks (fewer when there are fewer runs), as even as can be."""
    count = max(1, min(count, repetitions))
    edges = [round(i * repetitions / count) for i in range(count + 1)]
    return [(edges[i], edges[i + 1]) for i in range(count)]


def confirms(fresh: tuple[float, ...], prior: tuple[float, ...], band: float = PRIOR_BAND,
             statistic: str = "median") -> bool:
    """Whether a fresh measurement's figure (its median, or its fastest run: ``TimingMethod.statistic``) lies
    within ``band`` of the prior's."""
    if not fresh or not prior:
        return False
    was = figure_of(prior, statistic)
    return was > 0 and abs(figure_of(fresh, statistic) - was) <= band * was


def _judging_block(every: list[tuple[int, int]], after: int = -1) -> int:
    """The block after which priors are judged: the first after ``after`` by whose end the baselines have the calls
    the outside clock's lower bound needs, else the last."""
    return next((i for i, (_, stop) in enumerate(every) if i > after and stop >= MIN_CALLS), len(every) - 1)


def prior_stands(so_far: Figures, prior: Prior, method: TimingMethod, band: float,
                 launch_bound: tuple[str, ...] = ()) -> tuple[bool, str]:
    """Whether ``prior`` stands for a baseline whose fresh runs gave ``so_far``: only when, under every timer the
    fresh runs were timed by, the fresh figure lies within ``band`` of the prior's (a figure the check did not
    cover would stand unchecked in the speedups by that timer), and none of them counted the host's launch
    (``launch_bound``: such a figure is compared only with one taken in the same window, the host's speed being
    what it was then: ``timing/launch_bound.py``); and the detail, in words (the headline's figures, or what failed
    the check)."""
    if launch_bound:
        return False, (f"the fresh {' and '.join(launch_bound)} figure counted the host's launch: only one measured "
                       "beside the candidate compares with the candidate's")
    fresh = dict(so_far)
    missing = [timer for timer in fresh if not prior.samples(timer)]
    if missing:  # measured under fewer timers (a long call's headline alone): it cannot stand for these
        return False, f"no prior figure for the {' and '.join(missing)} timer"
    if method.headline not in fresh:
        return False, f"no fresh figure by the {method.headline} timer"

    def compared(timer: str) -> str:
        label = "" if timer == method.headline else f"{timer} "
        return (f"fresh {label}{statistic_words(method.statistic)} {figure_of(fresh[timer], method.statistic):.4g} "
                f"ms over {len(fresh[timer])} runs vs {figure_of(prior.samples(timer), method.statistic):.4g} ms")

    off = [timer for timer in fresh if not confirms(fresh[timer], prior.samples(timer), band, method.statistic)]
    return not off, "; ".join(compared(timer) for timer in [method.headline, *[t for t in off if t != method.headline]])


def measure_window(repetitions: int, names: tuple[str, ...], priors: dict[str, Prior],
                   time_candidate: Callable[[tuple[int, int]], Reply] | None,
                   time_baseline: Callable[[str, tuple[int, int]], Reply],
                   now: Callable[[], float] = time.time, count: int = BLOCKS, band: float = PRIOR_BAND,
                   baseline_calls: Callable[[], list[Interval]] = list, most: int = 0) -> Window:
    """Time the candidate (when ``time_candidate`` is given) and the baselines ``names`` in ``count`` interleaved
    blocks (``Device.timing_blocks``); a prior stands when the first block comes within ``band`` of it
    (``Device.prior_band``).

    :param time_candidate: times the candidate's runs ``(start, stop)``; its reply's value is a TimingOutcome.
    :param time_baseline: times one baseline's runs; its reply's value is a BaselineResults.
    :param baseline_calls: the baseline's calls of the block just timed, by the KForge process's clock.
    :param most: the runs the window grows to, its remaining runs in the blocks left, once a block's figure
        counted the host's launch on either side (0: it does not grow). Such a figure is its fastest run
        (``timing/launch_bound.py``), and the fastest of the few runs a long call gets in proportion to its
        length is still far from the call's own: 8 runs of a recurrent network's launch differed by 5-7% between
        two processes timing the same code.
    :returns: the window; ``failure`` set when the candidate's timing failed (nothing else is used then).
    """
    window = Window()
    active = list(names)
    parts: list[TimingOutcome] = []
    measured: dict[str, list[Figures]] = {name: [] for name in names}
    errors: list[tuple[str, str]] = []
    launch_bound: dict[str, set[str]] = {}  # baseline -> the timers whose fresh figure counted its launch
    confirmed: dict[str, str] = {}
    refuted: dict[str, str] = {}
    method = None
    every, planned = blocks(repetitions, count), repetitions
    # a prior is judged once the baselines have the calls the outside clock's lower bound needs (with fewer, a
    # candidate's wall figure would be bounded from above only), or at the last block
    judged_at = _judging_block(every)
    number = 0
    while number < len(every):  # ``every`` may grow on the way
        block = every[number]
        if time_candidate is not None:
            window.order.append(("candidate", block))
            reply = time_candidate(block)
            if reply.failure is not None:
                window.failure = reply
                return window
            parts.append(reply.value)
        for name in list(active):
            window.order.append((name, block))
            reply = time_baseline(name, block)
            calls = baseline_calls()
            found = reply.value if reply.failure is None else None
            figures = dict(found.figures).get(name) if found is not None else None
            if figures is None:
                active.remove(name)
                errors.append((name, reply.message if found is None else dict(found.errors).get(name, "not measured")))
                continue
            method = found.method
            measured[name].append(figures)
            launch_bound.setdefault(name, set()).update(dict(found.launch_bound).get(name, ()))
            window.baseline_blocks.append(_timed_block(block[0], figures, calls))
        if number == judged_at and method is not None:
            for name in [n for n in active if n in priors]:
                agrees, detail = prior_stands(_joined(measured[name]), priors[name], method, band,
                                              tuple(sorted(launch_bound.get(name, ()))))
                if agrees:
                    confirmed[name] = detail
                    active.remove(name)
                else:
                    refuted[name] = detail
        bound = any(part.launch_bound for part in parts) or any(launch_bound.values())
        if most > repetitions and bound:  # the runs left, and the runs added, over the blocks left (one at least)
            every = every[:number + 1] + [(block[1] + start, block[1] + stop) for start, stop in
                                          blocks(most - block[1], max(1, len(every) - number - 1))]
            repetitions = most
            if number < judged_at:
                judged_at = _judging_block(every, after=number)
        number += 1
    if parts:
        window.candidate = _merged(parts)
        grown = (f"{repetitions} timed runs, grown from {planned} once a figure counted the host's launch (its "
                 "fastest run is the figure, and more runs bring it nearer the call's own)") \
            if repetitions > planned else ""
        window.candidate = dataclasses.replace(window.candidate, method=dataclasses.replace(
            window.candidate.method, repetitions=repetitions).noted(grown))
    if method is not None:
        method = dataclasses.replace(method, repetitions=repetitions)
    window.baselines, window.sources, window.measured = _baselines(
        names, priors, measured, confirmed, refuted, errors, method, now(), band)
    window.baselines = dataclasses.replace(window.baselines, launch_bound=tuple(
        (name, tuple(sorted(timers))) for name, timers in launch_bound.items()
        if timers and name in dict(window.baselines.figures)))
    return window


def _baselines(names: tuple[str, ...], priors: dict[str, Prior], measured: dict[str, list[Figures]],
               confirmed: dict[str, str], refuted: dict[str, str], errors: list[tuple[str, str]], method,
               at: float, band: float) -> tuple[BaselineResults, tuple[BaselineSource, ...], dict[str, Figures]]:
    failed = {name for name, _ in errors}
    samples, figures, sources, full = [], [], [], {}
    for name in names:
        if name in failed or method is None:
            continue
        if name in confirmed:
            prior = priors[name]
            chosen = prior.figures
            sources.append(BaselineSource(name, "confirmed", prior.measured_at, prior.origin, confirmed[name],
                                          band, checked_at=at))
        else:
            chosen = full[name] = _joined(measured[name])
            origin, prior = ("remeasured", priors[name].origin) if name in refuted else ("measured", "")
            sources.append(BaselineSource(name, origin, at, prior, refuted.get(name, ""), band, checked_at=at))
        samples.append((name, dict(chosen)[method.headline]))
        figures.append((name, chosen))
    notes = tuple((source.baseline, source.describe()) for source in sources)
    return BaselineResults(tuple(samples), tuple(errors), method, notes, tuple(figures)), tuple(sources), full


def _timed_block(first_run: int, figures: Figures, calls: list[Interval]) -> TimedBlock:
    """A baseline's block as its worker reported it (``figures``) and as the KForge process timed it (``calls``)."""
    return TimedBlock(first_run, {timer: list(samples) for timer, samples in figures}, tuple(calls))


def _joined(blocks_figures: list[Figures]) -> Figures:
    joined: dict[str, list[float]] = {}
    for figures in blocks_figures:
        for timer, samples in figures:
            joined.setdefault(timer, []).extend(samples)
    return tuple((timer, tuple(samples)) for timer, samples in joined.items())


def _merged(parts: list[TimingOutcome]) -> TimingOutcome:
    """The candidate's blocks as one timing outcome."""
    return TimingOutcome(
        samples_ms=tuple(s for part in parts for s in part.samples_ms), method=parts[0].method,
        flags=tuple(F.merge_flags([f for part in parts for f in part.flags])),
        notes=tuple(n for part in parts for n in part.notes), figures=_joined([part.figures for part in parts]),
        device_streams=max(part.device_streams for part in parts),
        launch_bound=tuple(sorted({timer for part in parts for timer in part.launch_bound})),
    )


class BaselinesWindow:
    """The baselines of one harness, measured in a window beside each candidate (:func:`measure_window`), and
    what carries from one window to the next: the baseline worker (and a second one getting ready for the next
    problem, swapped in when the harness moves on), the figures measured in full earlier in this session for the
    current problem (the next window's priors), the baseline cache, and the last window's baselines.

    :param settings: the harness settings (``baselines``, ``repetitions``, ``baseline_cache``, the limits).
    :param device_class: the workers' device (``timing_blocks``, ``prior_band``, ``host_cpu``).
    :param worker: times the baselines; :param ahead: gets ready for the next problem.
    :param cache: the baseline cache, in KForge's own state directory.
    :param facts: what the workers' device is (starts a worker when none has said yet); read for the cache's key.
    :param builds: builds the ``torch.compile`` baselines of the problems a suite says are coming, side by side
        (``baseline_builds.py``); the baseline workers build such a problem's only once it is there (from
        Inductor's cache), and a candidate's timing does not wait for one still under way: it goes on without that
        baseline, and the verdict says why.
    """

    def __init__(self, settings: HarnessSettings, device_class: type[Device], worker: BaselineWorker,
                 ahead: BaselineWorker, cache: BaselineCache, facts: Callable[[], DeviceFacts],
                 builds: BaselineBuilds | None = None) -> None:
        self._settings, self._device_class, self._facts = settings, device_class, facts
        self.worker, self.ahead, self.cache = worker, ahead, cache
        self.builds = builds
        self._priors: dict[str, Prior] = {}  # baselines measured in full earlier in this session, for this problem
        self.results: BaselineResults | None = None  # the last window's

    @property
    def settings(self) -> HarnessSettings:
        return self._settings

    def timers_for(self, call_ms: float | None) -> tuple[str, ...]:
        """The timers a call of ``call_ms`` is timed under (``run_count.measured_timers``; empty: every one)."""
        return measured_timers(call_ms, self._settings, timers_of(self._device_class))

    def headline(self) -> str:
        """The timer whose figure is the headline on the workers' device."""
        return headline_timer(self._settings.timer, timers_of(self._device_class))[0]

    def start(self) -> None:
        """Start the baseline worker now, without waiting for it (where the settings measure any baseline)."""
        if self._settings.baselines:
            self.worker.start()

    def build_on_host(self, problem: Problem) -> None:
        """Start the baseline worker and have it build ``problem``'s model on the host
        (``BaselineWorker.build_on_host``) where the settings measure any baseline; returns at once."""
        if self._settings.baselines:
            self.worker.build_on_host(problem)

    def get_ready(self, problem: Problem) -> None:
        """Have the baseline worker prepare ``problem`` (as workers see it) and build the baselines (those a builder
        builds once it has); returns at once."""
        self.worker.get_ready(problem, self._buildable(problem))

    def expect(self, problem: Problem) -> None:
        """The second worker gets ready for ``problem``, the next one, while the current one is evaluated."""
        self.ahead.get_ready(problem, self._buildable(problem))

    def _buildable(self, problem: Problem) -> tuple[str, ...]:
        """The baselines a baseline worker may build for ``problem`` now: those a builder still builds wait."""
        names, builds = self._settings.baselines, self.builds
        if builds is None or builds.done(problem.digest):
            return names
        return tuple(name for name in names if name not in builds.names)

    def move_to(self, problem: Problem) -> None:
        """Measure ``problem``'s baselines from now on: the worker that got ready for it takes over, and nothing
        measured for the last problem is a prior."""
        if self.ahead.prepared_for == problem.digest:  # built while the last problem was evaluated
            self.worker, self.ahead = self.ahead, self.worker
        self.results = None
        self._priors = {}

    def beside(self, problem: Problem, timeouts: StageTimeouts, phases: Phases, *, ready_first: bool = False,
               calls: CallLog | None = None) -> CandidateBeside:
        """What times one candidate with the baselines beside it; ``ready_first``: the baseline worker is told to
        get ready only then (a problem large for the device, whose baselines would otherwise sit beside the
        candidate's trials); ``calls``: the candidate's calls as the KForge process's clock saw them, from which its
        timing takes the call's length (the timed runs follow it: ``run_count``)."""
        return CandidateBeside(self, problem, timeouts, phases, ready_first, calls)

    def runtimes(self) -> dict[str, RuntimeStats]:
        """The last window's baselines' runtimes (the headline timer's); none before a window was measured."""
        results = self.results or BaselineResults((), (), None)
        statistic = results.method.statistic if results.method is not None else "median"
        return {name: RuntimeStats.from_samples(samples, statistic) for name, samples in results.samples_ms}

    def measure(self, problem: Problem, timeouts: StageTimeouts, phases: Phases,
                candidate: Callable[[tuple[int, int]], Reply] | None = None, runs: int | None = None,
                timers: tuple[str, ...] = ()) -> Window:
        """Measure the baselines (beside ``candidate``'s timing, when given) over ``runs`` timed runs (default
        ``harness.repetitions``) under ``timers`` (every one the device has when empty), and keep what was measured
        in full as the prior of the next window, here and in the baseline cache."""
        settings = self._settings
        runs = runs or settings.repetitions
        phases.step(EvaluationStep("baselines", what=", ".join(settings.baselines)))
        with phases.phase("baselines_ready"):  # within timing: the baselines' own build (torch.compile's), apart
            names, missing = self._ready(problem, settings.startup_timeout_s + timeouts.build_s)
        band = self._device_class.prior_band  # None: no figure measured before stands on this device
        key = BaselineKey.of(problem.digest, self._facts(), settings, host_cpu=self._device_class.host_cpu) \
            if settings.baseline_cache != "off" and band is not None else None
        priors, notice = dict(self._priors), ""
        if key is not None and settings.baseline_cache == "use":
            cached = self.cache.read(key)
            for name, baseline in cached.baselines.items():
                priors.setdefault(name, Prior(baseline.figures, baseline.measured_at, "the baseline cache"))
            notice = cached.notice

        def baseline(name: str, block: tuple[int, int]) -> Reply:
            self.worker.take_calls()  # what it marked before this block is not this block's
            self.block_begins(phases, block, runs, name)
            return self.worker.time_block(name, block, timeouts.build_s + timeouts.timing_s, timers)

        window = measure_window(runs, names, priors, candidate, baseline,
                                count=self._device_class.timing_blocks, band=band or 0.0,
                                baseline_calls=self.worker.take_calls, most=settings.repetitions)
        if missing:  # a build under way did not hold the candidate's timing: said, as a baseline not measured
            window.baselines = dataclasses.replace(window.baselines, errors=window.baselines.errors + missing)
        if notice:  # the entry that was not used, and why, beside each baseline's note
            notes = _noted(window.baselines.notes, notice, settings.baselines)
            window.baselines = dataclasses.replace(window.baselines, notes=notes)
        method, measured_at = window.baselines.method, {s.baseline: s.measured_at for s in window.sources}
        if band is not None:  # what was measured in full is the next window's prior
            for name, figures in window.measured.items():
                self._priors[name] = Prior(figures, measured_at[name],
                                           "the timing of an earlier candidate in this command")
        if key is not None and method is not None and window.measured:
            self.cache.write(key, {name: (figures, method) for name, figures in window.measured.items()},
                             at=max(measured_at[name] for name in window.measured))
        if window.failure is None:
            self.results = window.baselines
        return window

    def held_calls(self, window: Window, held_ms: float, timers: tuple[str, ...], timeouts: StageTimeouts
                   ) -> list[TimedBlock]:
        """The first baseline ``window`` measured, timed again over :data:`MIN_CALLS` runs under ``timers``, each
        call held ``held_ms`` longer, as the KForge process saw them: what its clock adds to a call as long as a
        candidate's (``outside_clock.check_candidate``). None measured, or a failure: nothing."""
        timed = dict(window.baselines.figures)
        name = next((who for who, _ in window.order if who in timed), None)
        if name is None:
            return []
        self.worker.take_calls()
        reply = self.worker.time_block(name, (0, MIN_CALLS), timeouts.build_s + timeouts.timing_s, timers,
                                       held_ms=held_ms)
        calls = self.worker.take_calls()
        figures = dict(reply.value.figures).get(name) if reply.failure is None else None
        return [_timed_block(0, figures, calls)] if figures is not None else []

    def _ready(self, problem: Problem, timeout_s: float) -> tuple[tuple[str, ...], tuple[tuple[str, str], ...]]:
        """Wait until the baseline worker has built what it can for ``problem``: the baselines to time, and those
        left out with why (a builder's build still under way: the timing does not wait for it)."""
        builds = self.builds
        names = self._buildable(problem)
        self.worker.get_ready(problem, names)  # the baselines whose build is done since, from Inductor's cache
        self.worker.wait_ready(timeout_s)
        missing = tuple((name, f"{name} baseline not measured: {builds.missing(problem.digest)}")
                        for name in self._settings.baselines if name not in names) if builds is not None else ()
        return names, missing

    def block_begins(self, phases: Phases, block: tuple[int, int], runs: int, who: str) -> None:
        """Tell ``phases``' observer that ``who``'s runs ``block`` of the window's ``runs`` begin, as block N of M."""
        every = blocks(runs, self._device_class.timing_blocks)
        if block in every:
            phases.step(EvaluationStep("timing", every.index(block) + 1, len(every), who))

    @contextlib.contextmanager
    def quiet(self) -> Iterator[None]:
        """Within the block, nothing of the baselines' but their timed blocks uses the device: the builders of
        coming problems' ``torch.compile`` baselines are stopped (they go on after it), and so is the second worker,
        getting ready for the next problem, once its start and its preparation are over. Those make the problem's
        inputs on the device and are waited for, not stopped: device work stopped halfway has stalled another
        process's timed call for a minute (a spare stopped while it made page-locked memory). Its baselines' builds,
        the work a builder does, are stopped as a builder's are, and go on after the block."""
        builders = self.builds.paused() if self.builds is not None else contextlib.nullcontext()
        with builders:
            self.ahead.wait_prepared(self._settings.startup_timeout_s + self._settings.compile_timeout_s)
            with self.ahead.paused():
                yield

    def discard(self) -> None:
        """End both baseline workers (each starts again when needed): the device's memory is wanted."""
        self.worker.discard()
        self.ahead.discard()

    def close(self) -> None:
        if self.builds is not None:
            self.builds.close()
        self.worker.close()
        self.ahead.close()


class CandidateBeside:
    """Times one candidate with the baselines beside it (``run_stages``'s ``timing``), and keeps the window."""

    def __init__(self, baselines: BaselinesWindow, problem: Problem, timeouts: StageTimeouts, phases: Phases,
                 ready_first: bool, calls: CallLog | None) -> None:
        self._baselines = baselines
        self._calls = calls
        self._problem = problem
        self._timeouts = timeouts
        self._phases = phases
        self._ready_first = ready_first
        self._timers: tuple[str, ...] = ()
        self.window: Window | None = None

    def time(self, call: Callable[..., Reply]) -> Reply:
        """Time the candidate through its worker's ``call``, block by block, the baselines' blocks between, over
        as many runs and under the timers its call's length gives (``run_count``)."""
        if self._ready_first:
            self._baselines.get_ready(self._problem)
        # the length of its correctness trials' calls, not the traced call's or the shape variants'
        call_ms = self._calls.call_ms(TRIAL_CALL_PREFIX) if self._calls is not None else None
        timeouts, settings = self._timeouts, self._baselines.settings
        runs, timers = timed_runs(call_ms, settings), self._baselines.timers_for(call_ms)
        self._timers = timers

        def candidate(block: tuple[int, int]) -> Reply:
            self._baselines.block_begins(self._phases, block, runs, "the candidate")
            return call(Time(block, timers), timeouts.timing_s, "timing", timeouts.waits)

        self.window = window = self._baselines.measure(self._problem, timeouts, self._phases, candidate, runs,
                                                       timers)
        if window.candidate is not None:  # grown where a figure counted the host's launch (measure_window)
            runs = window.candidate.method.repetitions
        why = _proportion_words(runs, timers, call_ms, settings, self._baselines.headline())
        if window.candidate is not None and why:
            method = window.candidate.method
            window.candidate = dataclasses.replace(window.candidate, method=dataclasses.replace(
                method, notes=why).noted(method.notes))
        return self.window.failure or Reply(value=self.window.candidate)

    def held_calls(self, held_ms: float) -> list[TimedBlock]:
        """Baseline calls held ``held_ms`` each, timed under the candidate's timers (``BaselinesWindow.held_calls``);
        nothing before the window."""
        if self.window is None:
            return []
        return self._baselines.held_calls(self.window, held_ms, self._timers, self._timeouts)


def _proportion_words(runs: int, timers: tuple[str, ...], call_ms: float | None, settings: HarnessSettings,
                      headline: str) -> str:
    """Why the candidate was timed fewer times, or under fewer timers, than the settings' most ("": it was not)."""
    words = []
    if runs < settings.repetitions:
        words.append(f"{runs} timed runs, not {settings.repetitions}: in proportion to the candidate's calls of "
                     f"{call_ms:.3g} ms in verification (harness.timing_target_ms: {settings.timing_target_ms:g} ms "
                     "of each callable's time under each timer)")
    if timers:
        words.append(f"timed under {' and '.join(timers)} alone, the other timers costing a call more each run "
                     "(harness.beside_timers)")
    if guard_only(timers, headline):
        words.append(f"the device's own clock on the first {GUARD_RUNS} runs of each callable only, beside "
                     f"{headline} as its guard (work on a stream the caller's never waited for, the streams that "
                     "decide the events' hold)")
    return "; ".join(words)


def _noted(notes: tuple[tuple[str, str], ...], notice: str,
           names: tuple[str, ...]) -> tuple[tuple[str, str], ...]:
    """Each baseline's note with ``notice`` (why the baseline cache's entry was not used) after it."""
    found = dict(notes)
    return tuple((name, f"{found[name]}; {notice}" if found.get(name) else notice)
                 for name in dict.fromkeys([*found, *names]))
