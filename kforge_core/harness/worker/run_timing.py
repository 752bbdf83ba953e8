"""Timing a callable the same way for candidates and baselines. Runs inside workers only.

Warm-up runs, then timed runs. Each run gets a fresh input set (a clone of one of the distinct seeded sets the
reference prepared, so no run sees the values of the run before it), the L2 cache is flushed and the device
drained before the clock starts, and the clock stops only after a device-wide synchronize and after every thread
the callable started has finished: work on side streams and threads is counted. Where the device has events, each
timed run is made a second time under them, the way the field times (Triton's ``do_bench``, KernelBench): the
start event is recorded right behind the flush, which is not drained first, so the host launches the call while
the flush runs and the launch time the flush covers is not counted; the wall clock, started after the drain,
counts it. Where the device can hold its queue (``Device.queue_hold``) and its ``device`` timer saw the call's work on
the caller's stream alone (its runs come first in each block), the flush is followed by a hold of twice the call's
launch time (the run's wall-clock call until an events call's launch was timed; never more than ``HOLD_LIMIT_MS``),
so that the whole call is queued before the start event is reached: the figure is then the device's span, however
slow the host is that second, not a launch time the flush happened not to cover. Twice, because an accelerator's
host thread runs at half its speed for a second or two now and then (a busy neighbour on its core): a hold as long
as the last launch left the next one, launched in such a second, half counted. Both calls of a run are as
likely to be the one whose output is checked. Where the device can tell its own busy time (the ``device`` timer),
the same runs are made again under that clock, before the others, so that its recording costs the other figures
nothing. ``harness.timer`` names the headline figure; the device names the statistic
(``Device.headline_statistic``: the median, or on the host CPU the fastest run).

The timed runs may be asked for in blocks (``runs``), so that the KForge process can interleave them with the
baselines' blocks in another worker; the warm-up runs come before the first block, and one more before each later
block (what idled in between, a thread pool, is awake again when the clock starts).

The garbage collector's young generations are collected before each block, and it never runs by itself while the
block runs (``timeit`` pauses it too), for the candidate's blocks and the baselines' alike: a collection falls in
whichever call happens to allocate past its threshold, and a worker that allocates more Python objects between
calls (the candidate's, whose calls are marked and checked) would have its calls hit more often. The youngest objects are collected after each call instead,
outside its interval, so that reference cycles a call left (holding its outputs) go before the next.

Every timed call is marked (``timer.calling``), so the KForge process holds its own clock against each one
(``harness/host/outside_clock.py``), and a copy of its outputs is taken after the worker's clock stopped but before
the mark ends (:func:`keep_outputs`): the copy is what a check of the call compares, and any work done to make it
differ from what the call returned falls inside the interval the KForge process timed. Baselines are timed the same
way, copies included, so the two pay the same for it.
"""

from __future__ import annotations

import contextlib
import gc
import threading
import time
from dataclasses import dataclass
from functools import partial
from typing import TYPE_CHECKING, Any, Callable, Iterator

import torch

from ...devices.harness_device import HOLD_LIMIT_MS
from ...records import Flag
from ...settings import HarnessSettings
from ...timing.stage_timer import StageTimer
from .. import flags as F
from ...values import flatten_output
from ...timing.timed_runs import CHECKS_NOTE, GUARD_RUNS, guard_only, pool_index, timed_label
from ..cpu_placement import on_timing_cpu, settled
from ...timing.headline import headline_timer
from ..verdict import TimingMethod
from .host_copies import host_copy
from .reference import ProblemData, fresh_inputs
from .threads import join_threads, new_threads

if TYPE_CHECKING:
    from ...devices.harness_device import HarnessDevice

THREAD_JOIN_S = 60.0
LAUNCH_MARGIN_MS = 0.02  # added to twice the call's launch time when the hold is sized from it
LAUNCH_PAST_HOLD = "events: the call's launch outlasted the hold"  # how the timing notes begin to say so
NO_HOLD = "events: no hold before the calls"  # how they begin where the call's streams allowed none

# Bound at import, before any candidate is imported: a candidate that replaces time.perf_counter sizes no hold.
_perf_counter = time.perf_counter


@dataclass
class Kept:
    """A timed call's outputs as they were when it returned: plain copies (None for a leaf that is not a plain
    tensor), and how they nest (``values.flatten_output``)."""

    leaves: list[Any]
    structure: tuple[Any, ...]


KEEP_ON_DEVICE_SHARE = 4  # outputs kept on the device only where they take at most a quarter of what is free there
ASK_FROM_BYTES = 256 << 20  # smaller outputs are copied on the device without asking what is free


def keep_outputs(result: Any, device: HarnessDevice) -> Kept:
    """Copies of ``result``'s tensors, made and finished on the device, or in host memory where copies on the device
    would take more than a :data:`KEEP_ON_DEVICE_SHARE` of its free memory (a 4.3 GB output whose call peaks at
    65 GB had no room for a second copy on a 141 GB device that other processes shared, and the candidate ran out
    of memory). Nothing but ``type`` touches a leaf before it is copied: a tensor subclass gets no chance to run its
    own code."""
    leaves, structure = flatten_output(result)
    plain = [o.detach() if type(o) in (torch.Tensor, torch.nn.Parameter) else None for o in leaves]
    copy = torch.Tensor.clone if _fits_on_device(plain, device) else host_copy
    kept = [None if o is None else copy(o) for o in plain]
    device.synchronize()
    return Kept(kept, structure)


def _fits_on_device(tensors: list[Any], device: HarnessDevice) -> bool:
    """Whether copies of ``tensors`` fit the device beside what it holds. The device is asked only for outputs
    from :data:`ASK_FROM_BYTES` up: asking takes time inside the call's marked interval, which widens what the
    outside clock must allow every call."""
    if device.host_cpu:
        return True
    size = sum(t.numel() * t.element_size() for t in tensors if t is not None)
    if size < ASK_FROM_BYTES:
        return True
    free = device.memory().free
    return not free or size * KEEP_ON_DEVICE_SHARE <= free


@dataclass
class TimedRuns:
    samples_ms: dict[str, list[float]]  # timer -> one sample per timed run
    flags: list[Flag]
    device_streams: int = 0  # the streams the runs involved, the caller's among them (0: no device timer, or untold)
    # events runs whose launch outlasted the hold before them, of the held ones, and the longest launch (ms)
    launch_past_hold: tuple[int, int, float] = (0, 0, 0.0)
    # where a device that can hold its queue held it before no events call, the call's work having run on more
    # streams than the caller's: how many (0: held, or not a device that holds)
    unheld_streams: int = 0

    def figures(self) -> tuple[tuple[str, tuple[float, ...]], ...]:
        return tuple((name, tuple(samples)) for name, samples in self.samples_ms.items())

    def launch_bound(self) -> tuple[str, ...]:
        """The timers whose figure counts the host's launch besides the device's work: ``events`` where no hold
        was made (the call's streams allowed none) or a launch outlasted the hold. Such a figure moves with the
        host's speed, as ``wall`` does; where either side of a comparison has one, the verdict takes that timer's
        fastest run on both sides (``timing/launch_bound.py``)."""
        past, _, _ = self.launch_past_hold
        return ("events",) if "events" in self.samples_ms and (self.unheld_streams or past) else ()

    def hold_note(self) -> str:
        """What a verdict's timing notes say where the hold did not cover the launch, or none was made ("" where
        the hold covered it)."""
        if self.unheld_streams:
            return (f"{NO_HOLD}: their work ran on {self.unheld_streams} streams, and a hold on the caller's stream "
                    "would let the others' work run unseen while it lasted, so the events figure counts the host's "
                    "launch, as wall does, and moves with the host's speed")
        past, held, longest = self.launch_past_hold
        if not past:
            return ""
        return (f"{LAUNCH_PAST_HOLD} before it in {past} of {held} runs (the longest "
                f"{longest:.3g} ms; a hold lasts at most {HOLD_LIMIT_MS:g} ms, and the device queues only so many "
                "launches behind it), so there the events figure counts the host's launch, as wall does, and moves "
                "with the host's speed")


def timing_method(device: HarnessDevice, settings: HarnessSettings, reference: ProblemData,
                  timers: tuple[str, ...] = ()) -> TimingMethod:
    """How the runs are timed: under ``timers`` (every timer the device has when empty)."""
    headline, fallback = headline_timer(settings.timer, device.timers)
    measured = _measured(device, timers)
    notes = (f"{len(reference.pool)} distinct seeded input sets (seeds {reference.pool_seeds[0]}.."
             f"{reference.pool_seeds[-1]}) cycled, each run on a clone of one or on one made for it; "
             f"{CHECKS_NOTE.format(elements=settings.timed_check_elements)}")
    placement = settled()
    if placement is not None:
        notes += (f"; every timed block, the baselines' too, on host CPU {placement.timing_cpu} "
                  f"({placement.describe()})")
    return TimingMethod(
        device=device.label,
        warmup=settings.warmup,
        repetitions=settings.repetitions,
        l2_flush_bytes=device.flush_bytes,
        synchronize=device.synchronize_description,
        timer=device.describe_timer(headline),
        fresh_inputs=True,
        notes=f"{fallback}; {notes}" if fallback else notes,
        headline=headline,
        timers=tuple((name, device.describe_timer(name)) for name in measured),
        statistic=device.headline_statistic,
    )


def time_runs(call: Callable[..., Any], reference: ProblemData, device: HarnessDevice, settings: HarnessSettings,
              timer: StageTimer | None = None, runs: range | None = None,
              returned: Callable[[int, str, Kept], None] | None = None, timers: tuple[str, ...] = (),
              series: str = "") -> TimedRuns:
    """Warm up (in full before run 0, one run before a later block), then time ``runs`` (all
    ``settings.repetitions`` by default) of ``call`` with every timer the device has. With a ``timer``, each call
    is marked as a call of forward (the mark is sent before the clock starts, and ends once the copy of its outputs
    is made); ``returned`` gets each timed call's run, label and copied outputs, after its mark ended and before
    the next call. ``timers``: the timers measured (every one the device has when empty). ``series`` names what is
    timed (the candidate, a baseline), whose blocks follow one another: where the device's own clock only guards
    the headline (``timed_runs.guard_only``) it takes the series' first runs, and a later block's events hold
    follows the streams it saw there."""
    # the candidate's blocks and the baselines' on one CPU (``cpu_placement``), with no collection inside
    with on_timing_cpu(), collector_paused():
        return _time_runs(call, reference, device, settings, timer or StageTimer(),
                          range(settings.repetitions) if runs is None else runs, returned, _measured(device, timers),
                          series, guard_only(timers, headline_timer(settings.timer, device.timers)[0]))


def _measured(device: HarnessDevice, timers: tuple[str, ...]) -> tuple[str, ...]:
    """The device's timers among ``timers`` (all of them for none)."""
    return tuple(t for t in device.timers if not timers or t in timers)


@contextlib.contextmanager
def collector_paused() -> Iterator[None]:
    """Collect the young generations now (a full collection, with torch's compiler loaded, is too slow for every
    block), then no automatic collection until the block ends (it is enabled again only where it was);
    the block collects its youngest objects after each call itself."""
    was_enabled = gc.isenabled()
    gc.collect(1)
    gc.disable()
    try:
        yield
    finally:
        if was_enabled:
            gc.enable()


# the streams the device's own clock last saw each series' work on (the events' hold of its later blocks)
_streams_seen: dict[str, int] = {}


def _time_runs(call: Callable[..., Any], reference: ProblemData, device: HarnessDevice, settings: HarnessSettings,
               timer: StageTimer, runs: range, returned: Callable[[int, str, Kept], None] | None,
               timers: tuple[str, ...], series: str, guard: bool) -> TimedRuns:
    size = len(reference.pool)
    hold = _Hold()
    samplers = [(name, sample) for name, sample in _samplers(device, hold) if name in timers]
    samples: dict[str, list[float]] = {name: [] for name, _ in samplers}
    with torch.no_grad():
        # the first block is warmed up in full; a later one by one run, which wakes what idled since (thread pools)
        for run in range(settings.warmup if runs.start == 0 else min(1, settings.warmup)):
            args = fresh_inputs(reference.pool, run % size)
            with timer.calling(f"warm-up run {run}"):
                threads_before = set(threading.enumerate())
                call(*args)
                _wait(device, threads_before)
        streams = 0
        if "device" in timers:  # first: the streams it sees decide whether the events' queue is held
            clocked = range(runs.start, max(runs.start, min(runs.stop, GUARD_RUNS))) if guard else runs
            if clocked:
                samples["device"], streams = _device_time(call, reference, device, settings, clocked, timer,
                                                          returned)
                _streams_seen[series] = streams
            else:
                streams = _streams_seen.get(series, 0)
            hold.one_stream = streams <= 1
        flags = []
        for run in runs:
            for name, sample in samplers:
                args = fresh_inputs(reference.pool, pool_index(run, settings, size))
                label = timed_label(run, name)
                with timer.timed(label):
                    elapsed_ms, result = sample(call, args, device)
                    kept = keep_outputs(result, device)
                samples[name].append(elapsed_ms)
                del result, args
                if returned is not None:
                    returned(run, label, kept)
                del kept
                gc.collect(0)
            flags.extend(_changed_state(device, settings, run))
    unheld = streams if "events" in timers and device.holds_queue and not hold.one_stream else 0
    return TimedRuns(samples, list(F.merge_flags(flags)), streams, (hold.past, hold.held, hold.longest_ms), unheld)


def calls_per_run(device: HarnessDevice) -> int:
    """How many calls each timed run makes besides the ``device`` timer's own runs (each one's result goes to
    ``returned``)."""
    return len(_samplers(device))


@dataclass
class _Hold:
    """How long to hold the device's queue before the next ``events`` sample: twice the call's launch time and a
    margin, the launch being the last events call's (timed from its start to its return) or, before there is one,
    the same run's wall-clock call (the launch cannot have taken longer); never more than twice that wall-clock call
    (a call that waits for the device inside it waits for the hold too, and a hold sized from such a launch grew
    from run to run), nor than ``HOLD_LIMIT_MS`` (``HarnessDevice.hold``). None where the call's work ran on streams besides the caller's: a hold queued on the
    caller's stream does not hold theirs, and their work would run while it lasts, unseen by the events (behind the
    flush alone, as the field times them)."""

    wall_ms: float = HOLD_LIMIT_MS
    launch_ms: float | None = None
    one_stream: bool = True  # False where the device timer saw the call's work on other streams: no hold
    held: int = 0  # events runs made behind a hold
    past: int = 0  # of them, those whose launch outlasted it
    longest_ms: float = 0.0  # the longest launch behind a hold

    def launched(self, launch_ms: float, held_ms: float) -> None:
        """An events call's launch took ``launch_ms`` behind a hold of ``held_ms`` (0: none was made)."""
        self.launch_ms = launch_ms
        if held_ms > 0:
            self.held += 1
            self.past += launch_ms > held_ms
            self.longest_ms = max(self.longest_ms, launch_ms)

    def ms(self) -> float:
        if not self.one_stream:
            return 0.0
        launch = self.wall_ms if self.launch_ms is None else min(self.launch_ms, self.wall_ms)
        return 2 * launch + LAUNCH_MARGIN_MS


def _samplers(device: HarnessDevice, hold: _Hold | None = None) -> list[tuple[str, Callable[..., tuple[float, Any]]]]:
    """A timed run's calls, one per sample: the wall clock's, and the events' where the device has them (timer,
    how it is taken). Both share ``hold``: the wall clock's call sizes the events' hold."""
    hold = hold or _Hold()
    events = [("events", partial(_events_sample, hold=hold))] if "events" in device.timers else []
    return [("wall", partial(_wall_sample, hold=hold)), *events]


def _wall_sample(call: Callable[..., Any], args: list[Any], device: HarnessDevice, hold: _Hold) -> tuple[float, Any]:
    """One call on the wall clock: caches flushed and the device drained before the clock starts."""
    device.flush_caches()
    device.synchronize()
    threads_before = set(threading.enumerate())
    elapsed_ms = device.start_timer()
    result = call(*args)
    _wait(device, threads_before)
    hold.wall_ms = elapsed_ms()
    return hold.wall_ms, result


def _events_sample(call: Callable[..., Any], args: list[Any], device: HarnessDevice, hold: _Hold) -> tuple[float, Any]:
    """One call between events, queued behind the flush and the hold: the device is drained of what came before,
    the flush and the hold are queued and not waited for, and the start event follows them on the caller's
    stream."""
    device.synchronize()
    device.flush_caches()
    held_ms = device.hold(hold.ms())
    threads_before = set(threading.enumerate())
    span = device.start_events()
    launched = _perf_counter()
    result = call(*args)
    hold.launched((_perf_counter() - launched) * 1e3, held_ms)
    span.stop()
    _wait(device, threads_before)
    return span.elapsed_ms(), result


def _device_time(call: Callable[..., Any], reference: ProblemData, device: HarnessDevice, settings: HarnessSettings,
                 runs: range, timer: StageTimer, returned: Callable[[int, str, Kept], None] | None
                 ) -> tuple[list[float], int]:
    """The same runs again under the device's own clock: its busy time in each, on every stream, and how many
    streams that work ran on. Each call's outputs are kept and handed to ``returned`` like the other timers'."""
    size = len(reference.pool)
    with device.device_clock() as clock:
        for index, run in enumerate(runs):
            args = fresh_inputs(reference.pool, pool_index(run, settings, size))
            label = timed_label(run, "device")
            with timer.timed(label):
                device.flush_caches()
                device.synchronize()
                threads_before = set(threading.enumerate())
                with clock.run(index):
                    result = call(*args)
                    _wait(device, threads_before)
                kept = keep_outputs(result, device)
            del args, result
            if returned is not None:
                returned(run, label, kept)
            del kept
            gc.collect(0)
    return clock.busy_ms(), clock.streams()


def _wait(device: HarnessDevice, threads_before: set[threading.Thread]) -> None:
    device.synchronize()
    join_threads(new_threads(threads_before), THREAD_JOIN_S)


def _changed_state(device: HarnessDevice, settings: HarnessSettings, run: int) -> list[Flag]:
    """Device state the run changed that would make later runs faster (a persisting-L2 set-aside): put back,
    and flagged."""
    changes = device.changed_state()
    if not changes:
        return []
    device.restore_state()
    return [F.raise_flag(change.flag, f"timed run {run}: {change.message}", settings) for change in changes]
