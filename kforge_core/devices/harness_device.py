"""The harness's policy around a vendor's :class:`~kforge_core.device.Device`: what a worker holds as its device.

The vendor's class answers what only it can (how to wait for the device, time it, flush and poison it, read its
memory, what it is and how fast); this class decides what the harness does with those answers, the same for every
device: how much a flush writes, which timers there are and how each sample is taken and described, how poisoned
an output is, the facts a prompt may quote, the peaks it measures where the vendor states none (and keeps), which
runtime errors are faults, what is released between problems. A fact the runtime does not offer (an attribute an
older torch lacks) is a default here, never an error. Each worker makes one with
:func:`~kforge_core.devices.make_device`; stage hooks find it in ``context.device``.
"""

from __future__ import annotations

import sys
import time
from dataclasses import replace
from pathlib import Path
from typing import TYPE_CHECKING, Any, Callable

from ..device import FALLBACK_FLUSH_BYTES, TIMERS, Device, DeviceClock, MemoryStats, StateChange
from ..peaks import DevicePeaks
from ..records import Failure

if TYPE_CHECKING:
    import torch

_POISON_CHUNK_WORDS = 1 << 24  # words checked for poison at a time: 64 MiB of output, 16 MiB of temporaries
# How the harness takes an ``events`` sample, whatever the device's events are (``describe_timer("events")``).
EVENTS_SEQUENCE = ("the start event recorded right behind the cache flush, which is not drained first: the call is "
                   "launched while the flush runs, so launch time the flush covers is not counted (as Triton's "
                   "do_bench and KernelBench time); runs of their own, beside the wall clock's")
#: The longest the device's queue is held before an ``events`` sample (:meth:`Device.hold`): twice the launch of a
#: network whose time the host's launches set (ResNet-18's 1.5-2.7 ms on an accelerator's host, DenseNet-201's or
#: an EfficientNet's several milliseconds), so that its whole launch is queued before the start event even where the
#: host runs at half its speed for that call; host work beyond it still shows in ``events``.
HOLD_LIMIT_MS = 20.0
# What the hold adds to the events sequence, on a device that can hold its queue.
EVENTS_HOLD = (f"behind the flush, the queue is held for twice the call's launch time (the same run's wall-clock "
               f"call until an events call's launch was timed, and never more than twice that call) and a margin, "
               f"at most {HOLD_LIMIT_MS:g} ms, so that "
               "the whole call is queued before the start event is reached and the figure is the device's span from "
               "its first work to its last, whatever the host's speed that second (what KernelBench's events give "
               "whenever its flush outlasts the launch)")

# Bound at import, before any candidate is imported: a candidate that replaces time.perf_counter fools no timer.
_perf_counter = time.perf_counter



class EventSpan:
    """Two timing events around one call: the first recorded at once, the second by :meth:`stop` when the call
    returns (on the caller's stream, before the device-wide synchronize, as CUDA-event timers do)."""

    def __init__(self, start: Any, end: Any) -> None:
        self._start, self._end = start, end
        start.record()

    def stop(self) -> None:
        self._end.record()

    def elapsed_ms(self) -> float:
        """After the device is synchronized: the milliseconds between the two events."""
        self._end.synchronize()
        return float(self._start.elapsed_time(self._end))


def _stated(name: str) -> property:
    """What the vendor's device states as a class attribute (``Device.<name>``), read through the policy."""
    return property(lambda self: getattr(self.vendor, name), doc=f"The vendor's ``Device.{name}``.")


class HarnessDevice:
    """One device as the harness uses it: the vendor's :class:`~kforge_core.device.Device` (``vendor``) with the
    harness's policy around it.

    :param vendor: the vendor's device, made for the backend being served.
    :param flush_bytes: ``harness.l2_flush_bytes``: how much to write to flush caches (0: the device decides).
    """

    def __init__(self, vendor: Device, *, flush_bytes: int = 0) -> None:
        self.vendor = vendor  # what it states of its device are its class attributes, read from it here
        self.backend = vendor.backend
        self.torch_device = vendor.torch_device
        self.cache_bytes = int(_guarded(vendor.cache_bytes, 0) or 0)
        if not self.vendor.flushes_caches:
            self.flush_bytes = 0
        else:
            cache_flush = 2 * self.cache_bytes if self.cache_bytes else FALLBACK_FLUSH_BYTES
            self.flush_bytes = flush_bytes or max(cache_flush, self.vendor.flush_floor_bytes)

    # ------------------------------------------------------------------------ what the vendor states

    host_cpu = _stated("host_cpu")
    host_memory = _stated("host_memory")
    headline_statistic = _stated("headline_statistic")
    profiler_activity = _stated("profiler_activity")
    timer_description = _stated("timer_description")

    @property
    def synchronize_description(self) -> str:
        """How :meth:`synchronize` waits, for the timing method."""
        return self.vendor.synchronize_description or (
            f"torch.{self.torch_device.type}.synchronize() (device-wide: every stream); threads the candidate "
            "started during the call are joined")

    # ------------------------------------------------------------------------------------ what it is

    def start(self) -> None:
        """Once per worker, before the reference runs: set the runtime up, and start it now rather than inside a
        timed run."""
        import torch

        self.vendor.start()
        torch.empty(1, device=self.torch_device)

    @property
    def index(self) -> int | None:
        """The device's index (``cuda:0`` -> 0); None for a device without one (the CPU, ``mps``)."""
        index = self.torch_device.index
        return index if index is not None else _guarded(self.vendor.current_index, None)

    @property
    def label(self) -> str:
        """The device (``backend.device``) with its index where it has one ("cuda:0", "mps", "cpu"), as the timing
        method records it."""
        index = self.index
        return self.backend.device if index is None else f"{self.backend.device}:{index}"

    def hardware_name(self) -> str:
        """What the device is ("NVIDIA H100 80GB HBM3", "Apple M3 Max"); its type when it cannot tell."""
        return str(_guarded(self.vendor.hardware_name, "") or self.backend.device)

    def facts(self) -> dict[str, str]:
        """Facts a prompt or a profile summary may quote: the name, the memory, and what the device adds."""
        facts = {"device": self.label, "name": self.hardware_name(), "memory": self.memory().describe()}
        if self.cache_bytes:
            facts["cache"] = f"{self.cache_bytes // 1024:,} KiB last-level cache"
        facts.update(_guarded(self.vendor.facts, {}))
        return facts

    def peaks(self, cache_dir: Path | None = None, *, remeasure: bool = False,
              memory_limit_bytes: int = 0) -> DevicePeaks | None:
        """The device's peak memory bandwidth and FLOP/s per unit, each with its source: what the vendor states
        (``Device.peaks``), with what it lacks of the bandwidth and ``measured_units`` measured on the device once
        and kept under ``cache_dir`` (no ``cache_dir``: nothing is measured). None where nothing is known. Called in
        a worker as it starts, before any candidate code is imported there; ``remeasure`` measures again what was
        measured before (``kforge check --device cpu --remeasure``); a measurement keeps within
        ``memory_limit_bytes`` (the worker's ``harness.memory_limit_mb``; 0: none set)."""
        from ..measured_peaks import cache_key, cached_peaks, measure_peaks

        units = self.vendor.measured_units
        found = _guarded(self.vendor.peaks, None) or DevicePeaks(self.hardware_name(), None)
        missing = found.missing(units)
        if not self.vendor.flushes_caches and not found.cache_bandwidths and self.cache_levels():
            missing += ("cache",)  # a problem that fits an unflushed cache runs from there: its bandwidth counts
        if missing and units and cache_dir is not None:
            measured_units = tuple(unit for unit in missing if unit not in ("memory", "cache"))
            measure = lambda: measure_peaks(self, measured_units, bandwidth="memory" in missing,  # noqa: E731
                                            cache="cache" in missing, memory_limit_bytes=memory_limit_bytes)
            measured = _guarded(lambda: cached_peaks(cache_dir, cache_key(self, missing), measure,
                                                     refresh=remeasure), None)
            found = found.filled_from(measured) if measured is not None else found
        if found.bandwidth is None and not found.compute:
            return None
        return named_units(self.vendor, replace(found, cache_bytes=found.cache_bytes or self.last_level_cache_bytes()))

    def cache_levels(self) -> tuple[int, ...]:
        """The sizes of the device's data caches from the second level up, smallest first (the last level alone by
        default; none where it is unknown)."""
        levels = _guarded(self.vendor.cache_levels, ())
        if levels:
            return tuple(levels)
        last = self.last_level_cache_bytes()
        return (last,) if last else ()

    def last_level_cache_bytes(self) -> int:
        """The device's last-level cache, flushed or not (0: unknown): how much of a call's data may stay in
        cache from one timed run to the next, or be written back only after the timer stopped."""
        return self.cache_bytes or max(_guarded(self.vendor.cache_levels, ()) or (0,))

    # ------------------------------------------------------------------------------------ timing

    def synchronize(self) -> None:
        """Wait until all work queued on the device, on every stream or queue, has finished."""
        self.vendor.synchronize()

    def start_timer(self) -> Callable[[], float]:
        """Start a clock; the returned function gives the milliseconds since (call it after :meth:`synchronize`)."""
        start = _perf_counter()
        return lambda: (_perf_counter() - start) * 1e3

    @property
    def timers(self) -> tuple[str, ...]:
        """The timing methods this device offers (:data:`~kforge_core.device.TIMERS`): the wall clock always,
        events and device time where the device has them."""
        return timers_of(self.vendor)

    def describe_timer(self, timer: str) -> str:
        """What ``timer`` measures on this device, for the timing method."""
        vendor = self.vendor
        hold = f"; {EVENTS_HOLD} ({vendor.queue_hold})" if vendor.queue_hold else ""
        events = f"{vendor.event_timer}; {EVENTS_SEQUENCE}{hold}" if vendor.event_timer else ""
        return {"wall": vendor.timer_description, "events": events, "device": vendor.device_timer}[timer]

    def start_events(self) -> EventSpan:
        """Record a start event now (the ``events`` timer); call ``stop()`` when the call returns, and
        ``elapsed_ms()`` after :meth:`synchronize`."""
        if not self.vendor.event_timer:
            raise ValueError(f"the {self.label} device has no event timer")
        return EventSpan(self.vendor.event(), self.vendor.event())

    @property
    def holds_queue(self) -> bool:
        """Whether the device can hold its queue before an ``events`` sample (``Device.queue_hold``)."""
        return bool(self.vendor.queue_hold)

    def hold(self, ms: float) -> float:
        """Before an ``events`` sample, after the flush: keep the device's queue busy for about ``ms`` (at most
        :data:`HOLD_LIMIT_MS`) without touching memory, so that the call is launched before the device reaches the
        start event; the milliseconds held. Nothing (0) where the device cannot (``queue_hold`` empty)."""
        if not self.holds_queue or ms <= 0:
            return 0.0
        held = min(ms, HOLD_LIMIT_MS)
        self.vendor.hold(held)
        return held

    def device_clock(self) -> DeviceClock:
        """A clock of the device's busy time over a series of runs (the ``device`` timer)."""
        if not self.vendor.device_timer:
            raise ValueError(f"the {self.label} device has no device timer")
        return self.vendor.device_clock()

    def flush_caches(self) -> None:
        """Between timed runs: evict what the last run left in the device's caches."""
        if self.flush_bytes:
            self.vendor.flush(self.flush_bytes)

    # ------------------------------------------------------------------------- memory and state

    def poison(self, output_bytes: list[int]) -> None:
        """Before a verified call: make memory the candidate does not write recognisable (``Device.poison``)."""
        self.vendor.poison(list(output_bytes))

    def stop_poisoning(self) -> None:
        """End what :meth:`poison` started where it lasts, before anything is timed."""
        self.vendor.stop_poisoning()

    def poisoned_fraction(self, tensor: torch.Tensor) -> float:
        """The fraction of ``tensor``'s 32-bit words that hold a poison word (0 when it cannot tell)."""
        import torch

        if tensor.numel() == 0 or (tensor.numel() * tensor.element_size()) % 4 or not tensor.is_contiguous():
            return 0.0
        words = tensor.detach().reshape(-1).view(torch.uint8).view(torch.int32)
        count = 0
        for start in range(0, words.numel(), _POISON_CHUNK_WORDS):  # temporaries of a chunk, not of the output
            piece = words[start:start + _POISON_CHUNK_WORDS]
            poisoned = torch.zeros_like(piece, dtype=torch.bool)
            for word in self.vendor.poison_words:
                poisoned |= piece == _as_int32(word)
            count += int(poisoned.sum().item())
        return count / words.numel()

    def memory(self) -> MemoryStats:
        """The device's memory use now (zeros where it cannot tell)."""
        return _guarded(self.vendor.memory, MemoryStats())

    def release_memory(self) -> None:
        """Between problems: collect the garbage, reset what ``torch.compile`` keeps (compiled graphs hold their
        tensors) and hand the allocator's cached blocks back to the device."""
        import gc

        if _dynamo_compiled():
            _guarded(sys.modules["torch._dynamo"].reset, None)
        gc.collect()
        self.empty_cache()

    def empty_cache(self) -> None:
        """Hand the allocator's cached, unused blocks back to the device; live tensors and compiled graphs stay.
        Where the device clears what was handed back beside other processes' work (``Device.cleared_bytes_per_s``),
        return once that clearing is over, so that no other worker's timed runs share the device with it."""
        rate = self.vendor.cleared_bytes_per_s
        before = self.memory().reserved if rate else 0
        _guarded(self.vendor.empty_cache, None)
        if before:
            handed_back = before - self.memory().reserved
            if handed_back > 0:
                time.sleep(handed_back / rate)

    def classify(self, error: BaseException | str) -> Failure | None:
        """``Failure.DEVICE_FAULT`` or ``Failure.OUT_OF_MEMORY`` when the runtime's own error text says so."""
        text = str(error).lower()
        if any(pattern in text for pattern in self.vendor.fault_patterns):
            return Failure.DEVICE_FAULT
        if any(pattern in text for pattern in self.vendor.out_of_memory_patterns):
            return Failure.OUT_OF_MEMORY
        return None

    def changed_state(self) -> tuple[StateChange, ...]:
        """Device state the candidate changed although it must not (checked after every timed run)."""
        return tuple(self.vendor.changed_state())

    def restore_state(self) -> None:
        """Put back what :meth:`changed_state` reported."""
        self.vendor.restore_state()


def named_units(device: Device | type[Device], peaks: DevicePeaks) -> DevicePeaks:
    """``peaks`` with the names ``device`` (or its class) gives its vector and matrix units."""
    return replace(peaks, vector_units=device.vector_units, matrix_units=device.matrix_units)


def _guarded(read: Callable[[], Any], default: Any) -> Any:
    """A fact the runtime may not offer (an attribute older torch lacks): ``default`` then."""
    try:
        return read()
    except Exception:
        return default


def _as_int32(word: int) -> int:
    return word - (1 << 32) if word >= 1 << 31 else word


def _dynamo_compiled() -> bool:
    """Whether Dynamo compiled anything in this process since its last reset (or may have: an unknown PyTorch).
    Resetting it otherwise costs an import of Inductor's CUDA-graph trees, seconds, for nothing to release."""
    dynamo = sys.modules.get("torch._dynamo")
    if dynamo is None or getattr(getattr(dynamo, "__spec__", None), "_initializing", False):
        return False  # not loaded, or still being imported by another thread (a worker's preload): nothing compiled
    counter = getattr(sys.modules.get("torch._dynamo.convert_frame"), "FRAME_COUNTER", None)
    return not isinstance(counter, int) or counter > 0 or "torch._inductor.cudagraph_trees" in sys.modules


def timers_of(vendor: Device | type[Device]) -> tuple[str, ...]:
    """The timing methods a device (or its class) offers (:data:`~kforge_core.device.TIMERS`): the wall clock always, events
    and device time where it has them."""
    return tuple(t for t in TIMERS if t == "wall" or (t == "events" and vendor.event_timer)
                 or (t == "device" and vendor.device_timer))
