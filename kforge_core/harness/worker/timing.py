"""Timing a callable the same way for candidates and baselines. Runs inside workers only.

Warm-up runs, then timed runs. Each run gets a fresh input set (a clone of one of the distinct seeded sets the
reference prepared, so no run sees the values of the run before it), the L2 cache is flushed and the device
drained before the clock starts, and the clock stops only after a device-wide synchronize and after every thread
the callable started has finished: work on side streams and threads is counted. The median is the headline.
"""

from __future__ import annotations

import threading
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any, Callable

import torch

from ...records import Flag
from ...settings import HarnessSettings
from ...stage_timer import StageTimer
from ...values import flatten_output
from .. import flags as F
from ..timed_runs import checked_timed_runs, pool_index
from ..verdict import TimingMethod
from .reference import ReferenceData, clone_values
from .threads import join_threads, new_threads

if TYPE_CHECKING:
    from ...device import Device

THREAD_JOIN_S = 60.0


@dataclass
class TimedRuns:
    samples_ms: list[float]
    outputs: dict[int, tuple[list[Any], tuple[Any, ...]]]  # timed run -> copies of its output leaves, structure
    flags: list[Flag]


def timing_method(device: Device, settings: HarnessSettings, reference: ReferenceData) -> TimingMethod:
    checked = checked_timed_runs(settings)
    return TimingMethod(
        device=device.label,
        warmup=settings.warmup,
        repetitions=settings.repetitions,
        l2_flush_bytes=device.flush_bytes,
        synchronize=device.synchronize_description,
        timer=device.timer_description,
        fresh_inputs=True,
        notes=(f"{len(reference.pool)} distinct seeded input sets (seeds {reference.pool_seeds[0]}.."
               f"{reference.pool_seeds[-1]}) cycled, each run on clones of one; outputs of {len(checked)} timed "
               "runs, drawn at random after each returned, checked against the reference"),
    )


def time_runs(call: Callable[..., Any], reference: ReferenceData, device: Device, settings: HarnessSettings,
              keep: tuple[int, ...] = (), timer: StageTimer | None = None,
              returned: Callable[[int, Any], None] | None = None) -> TimedRuns:
    """Warm up, then time ``settings.repetitions`` runs of ``call``; keep the outputs of the runs in ``keep``.
    With a ``timer``, each run is marked as a call of forward (the mark is sent before the clock starts);
    ``returned`` sees each timed run's result after the clock stopped, before the next run."""
    timer = timer or StageTimer()
    size = len(reference.pool)
    with torch.no_grad():
        for run in range(settings.warmup):
            args = clone_values(reference.pool[run % size])
            with timer.calling(f"warm-up run {run}"):
                threads_before = set(threading.enumerate())
                call(*args)
                _wait(device, threads_before)
        samples, kept, flags = [], {}, []
        for run in range(settings.repetitions):
            args = clone_values(reference.pool[pool_index(run, settings, size)])
            with timer.calling(f"timed run {run}"):
                device.flush_caches()
                device.synchronize()
                threads_before = set(threading.enumerate())
                elapsed_ms = device.start_timer()
                result = call(*args)
                _wait(device, threads_before)
                samples.append(elapsed_ms())
            if run in keep:
                kept[run] = _copies(result)
            if returned is not None:
                returned(run, result)
            flags.extend(_changed_state(device, settings, run))
            del result, args
    return TimedRuns(samples, kept, list(F.merge_flags(flags)))


def _wait(device: Device, threads_before: set[threading.Thread]) -> None:
    device.synchronize()
    join_threads(new_threads(threads_before), THREAD_JOIN_S)


def _copies(result: Any) -> tuple[list[Any], tuple[Any, ...]]:
    """Copies of the output leaves, taken after the clock stopped (a candidate may hand back the same tensor
    again), and how they nest."""
    leaves, structure = flatten_output(result)
    return [o.detach().clone() if type(o) is torch.Tensor else o for o in leaves], structure


def _changed_state(device: Device, settings: HarnessSettings, run: int) -> list[Flag]:
    """Device state the run changed that would make later runs faster (a persisting-L2 set-aside): put back,
    and flagged."""
    changes = device.changed_state()
    if not changes:
        return []
    device.restore_state()
    return [F.raise_flag(change.flag, f"timed run {run}: {change.message}", settings) for change in changes]
