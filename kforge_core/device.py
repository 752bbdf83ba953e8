"""The device a backend runs on, as the harness sees it: the one interface every device provides.

A plugin hands its device to the core as a class, ``Backend(device_class=MyDevice)``; each worker makes one
instance and the harness only ever talks to it (timing, verification, baselines, the reference, fault
classification, the generic profile). :class:`Device` holds the policy in its public methods and leaves a device the
underscore methods to fill, as tinygrad's devices do. The base class itself serves any torch device type through
``torch.get_device_module``; :class:`~kforge_core.devices.cpu.CpuDevice` (the core's built-in, used when a backend
names no class) and ``kforge_nvidia.device.CudaDevice`` are the first two implementations.

Importing this module does not import torch, so a plugin can name its device class when it registers its backend;
a device module must keep it that way (import torch inside methods).
"""

from __future__ import annotations

import platform
import sys
import time
from dataclasses import dataclass, replace
from pathlib import Path
from typing import TYPE_CHECKING, Any, Callable, ClassVar, ContextManager

from .peaks import DevicePeaks
from .records import Failure

if TYPE_CHECKING:
    import torch

    from .records import Backend

#: The timing methods, in the order figures are shown: the host clock, device events around the call, and the
#: device's own records of the work it ran (every stream). ``docs/timing.md`` says what each measures.
TIMERS = ("wall", "events", "device")
POISON_WORD = 0x7FC0DEAD  # a float32 NaN with a payload nothing computes by accident
_POISON_CHUNK_WORDS = 1 << 24  # words checked for poison at a time: 64 MiB of output, 16 MiB of temporaries
FALLBACK_FLUSH_BYTES = 256 * 1024 * 1024
# What Triton's do_bench and KernelBench's CUDA-event timing write to flush the L2 before a timed call. Devices timed
# by events flush at least this much, so that the host's launch of the call overlaps a flush of the same length as
# theirs (:data:`EVENTS_SEQUENCE`) and the ``events`` figures mean what the field's mean.
FIELD_FLUSH_BYTES = 256 * 1024 * 1024
# How the harness takes an ``events`` sample, whatever the device's events are (``describe_timer("events")``).
EVENTS_SEQUENCE = ("the start event recorded right behind the cache flush, which is not drained first: the call is "
                   "launched while the flush runs, so launch time the flush covers is not counted (as Triton's "
                   "do_bench and KernelBench time); runs of their own, beside the wall clock's")
#: The longest the device's queue is held before an ``events`` sample (:meth:`Device.hold`): long enough to cover the
#: launch of a call of a few hundred kernels, short enough that host work beyond it still shows in ``events``.
HOLD_LIMIT_MS = 1.0
# What the hold adds to the events sequence, on a device that can hold its queue.
EVENTS_HOLD = (f"behind the flush, the queue is held for as long as the same run's wall-clock call took (at most "
               f"{HOLD_LIMIT_MS:g} ms, less once the call's launch time is known), so that the whole call is queued "
               "before the start event is reached and the figure is the device's span from its first work to its "
               "last, whatever the host's speed that minute (what KernelBench's events give whenever its flush "
               "outlasts the launch)")

# Bound at import, before any candidate is imported: a candidate that replaces time.perf_counter fools no timer.
_perf_counter = time.perf_counter


@dataclass(frozen=True)
class MemoryStats:
    """The device's memory, in bytes (0 where the device cannot tell)."""

    allocated: int = 0  # held by live tensors
    reserved: int = 0  # held by the runtime's allocator, live or cached
    total: int = 0  # the device's capacity
    available: int = 0  # free for this process to take now, the runtime's cache included (0: unknown)

    @property
    def free(self) -> int:
        """What this process could still take: what the device says is available plus what the allocator holds
        unused, else the capacity less what is reserved (0: unknown)."""
        if self.available:
            return self.available + max(self.reserved - self.allocated, 0)
        return max(self.total - self.reserved, 0) if self.total else 0

    def describe(self) -> str:
        def gib(n: int) -> str:
            return f"{n / (1 << 30):.2f} GiB"

        parts = [f"{gib(self.allocated)} allocated"] if self.allocated else []
        parts += [f"{gib(self.reserved)} reserved"] if self.reserved else []
        parts += [f"{gib(self.total)} in all"] if self.total else []
        return ", ".join(parts) or "memory use unknown"


@dataclass(frozen=True)
class StateChange:
    """Device state a candidate changed although it must not (a setting that outlives the call and would make
    later timed runs faster). The harness puts the state back (:meth:`Device.restore_state`) and raises ``flag``.

    :param flag: the cheat flag's code (``kforge_core.harness.flags.CATALOGUE``), e.g. ``"l2_persistence"``.
    :param message: what changed, for people and for the agent.
    """

    flag: str
    message: str


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


class DeviceClock:
    """The device's own account of a series of runs: how long the device was busy in each (kernels, copies and
    fills on every stream, summed), from the runtime's records. A context manager around the runs; each run is
    bracketed by :meth:`run`, its call and synchronize inside."""

    def __enter__(self) -> DeviceClock:
        return self

    def __exit__(self, *exc_info: object) -> None:
        return None

    def run(self, index: int) -> ContextManager[None]:
        raise NotImplementedError

    def busy_ms(self) -> list[float]:
        """After the clock stopped: each run's busy time, in the order the runs were bracketed."""
        raise NotImplementedError

    def streams(self) -> int:
        """After the clock stopped: how many streams (queues) the runs involved, the caller's counted once where
        the clock can tell it, with every stream their device work ran on; 0 where the records do not say. More
        than one: the call moved work off the caller's stream (all of it, or some), which ``events`` may not see."""
        return 0


class Device:
    """What the harness needs from one device. Runs inside workers (and, for the class attributes, anywhere).

    :param backend: the backend being served; ``backend.device`` names the torch device type unless the class sets
        :attr:`torch_type`.
    :param flush_bytes: ``harness.l2_flush_bytes``: how much to write to flush caches (0: the device decides).
    """

    #: The torch device type tensors live on ("cuda", "mps", "xpu", "cpu"); empty: ``backend.device``.
    torch_type: ClassVar[str] = ""
    #: True when candidates run on the host's own cores: builds ahead then never run beside a timed run, and the
    #: worker's address space may be limited (``harness.memory_limit_mb``).
    host_cpu: ClassVar[bool] = False
    #: True when the device's tensors live in host memory (the host CPU, or a device served through it): its peaks
    #: are measured at the host's sizes.
    host_memory: ClassVar[bool] = False
    #: Whether :meth:`flush_caches` writes a buffer between timed runs.
    flushes_caches: ClassVar[bool] = True
    #: The least a flush writes whatever the cache's size (unless ``harness.l2_flush_bytes`` says): accelerators
    #: timed by events set :data:`FIELD_FLUSH_BYTES`, the field's flush, whose length is the launch window the
    #: ``events`` timer leaves uncounted.
    flush_floor_bytes: ClassVar[int] = 0
    #: Which figure of the timed runs is the runtime (``TimingMethod.statistic``): "median", or "min" where the
    #: device's cores are shared with everything else the host runs, so that other work only ever slows a run down.
    headline_statistic: ClassVar[str] = "median"
    #: In how many blocks a callable's timed runs are taken, in turn with the baselines' (``interleave.py``): more
    #: and shorter blocks where the machine's load changes within a second, so that a quiet stretch falls on the
    #: candidate's runs and the baselines' alike.
    timing_blocks: ClassVar[int] = 4
    #: How near a baseline's fresh first block must come to a figure measured before (the baseline cache, an
    #: earlier candidate's window) for that figure to stand (``interleave.py``); None: never, the device's timings
    #: drift past any band that keeps a speedup honest, so baselines are measured in full beside every candidate.
    prior_band: ClassVar[float | None] = 0.10
    #: The ``torch.profiler.ProfilerActivity`` that traces this device's kernels ("CUDA", "XPU"); empty: none.
    profiler_activity: ClassVar[str] = ""
    #: What the ``events`` timer is on this device ("torch.cuda.Event pairs on the current stream"); empty: none
    #: (:meth:`_event` makes one event).
    event_timer: ClassVar[str] = ""
    #: What the ``device`` timer reads on this device; empty: none (:meth:`_device_clock` makes the clock).
    device_timer: ClassVar[str] = ""
    #: How :meth:`hold` keeps the device's queue busy before an ``events`` sample ("torch.cuda._sleep"); empty: it
    #: cannot, and launch time beyond the flush's length is counted in ``events``.
    queue_hold: ClassVar[str] = ""
    #: The 32-bit words :meth:`poison` leaves in memory a candidate did not write.
    poison_words: ClassVar[tuple[int, ...]] = (POISON_WORD,)
    #: Lower-case text of the runtime's errors after which the device fails every call (the worker is replaced).
    fault_patterns: ClassVar[tuple[str, ...]] = ()
    #: Lower-case text of the runtime's own out-of-memory errors (Python's and torch's are known to the core).
    out_of_memory_patterns: ClassVar[tuple[str, ...]] = ()
    #: The environment variable that shows a process only some of the device's units, by index
    #: ("CUDA_VISIBLE_DEVICES"): a harness bound to one unit (``kforge bench --devices 0,1``) starts its workers and
    #: build processes with it set. Empty: the device has no units to choose (the host CPU) or cannot be bound.
    visible_devices_env: ClassVar[str] = ""
    #: Variables every worker and build-ahead child of this device starts with, for the runtime's own settings (a
    #: profiler that must let go of the process when its session ends, so that it slows no later timed run).
    #: A variable the user has set keeps the user's value.
    runtime_environment: ClassVar[tuple[tuple[str, str], ...]] = ()
    #: The compute units (``kforge_core.peaks.UNITS``) measured on the device where :meth:`_peaks` states no figure
    #: for them, with the memory bandwidth where it states none: the units this kind of device has and kernels use.
    #: Empty: the device is never measured.
    measured_units: ClassVar[tuple[str, ...]] = ("fp32",)
    #: What the device's vector and matrix units are called, in the peaks' descriptions.
    vector_units: ClassVar[str] = "vector units"
    matrix_units: ClassVar[str] = "matrix units"

    def __init__(self, backend: Backend, *, flush_bytes: int = 0) -> None:
        import torch

        self.backend = backend
        self.torch_device = torch.device(self.torch_type or backend.device)
        self.cache_bytes = self._guarded(self._cache_bytes, 0)
        if not self.flushes_caches:
            self.flush_bytes = 0
        else:
            cache_flush = 2 * self.cache_bytes if self.cache_bytes else FALLBACK_FLUSH_BYTES
            self.flush_bytes = flush_bytes or max(cache_flush, self.flush_floor_bytes)
        self._flush_buffer: Any = None

    # -------------------------------------------------------------------------------------------- policy

    def start(self) -> None:
        """Once per worker, before the reference runs: set the runtime up, and start it now rather than inside a
        timed run."""
        import torch

        self._start()
        torch.empty(1, device=self.torch_device)

    @property
    def index(self) -> int | None:
        """The device's index (``cuda:0`` -> 0); None for a device without one (the CPU, ``mps``)."""
        index = self.torch_device.index
        return index if index is not None else self._guarded(self._current_index, None)

    @property
    def label(self) -> str:
        """The device (``backend.device``) with its index where it has one ("cuda:0", "mps", "cpu"), as the timing
        method records it."""
        index = self.index
        return self.backend.device if index is None else f"{self.backend.device}:{index}"

    def hardware_name(self) -> str:
        """What the device is ("NVIDIA H100 80GB HBM3", "Apple M3 Max"); its type when it cannot tell."""
        return str(self._guarded(self._hardware_name, "") or self.backend.device)

    def facts(self) -> dict[str, str]:
        """Facts a prompt or a profile summary may quote: the name, the memory, and what the device adds."""
        facts = {"device": self.label, "name": self.hardware_name(), "memory": self.memory().describe()}
        if self.cache_bytes:
            facts["cache"] = f"{self.cache_bytes // 1024:,} KiB last-level cache"
        facts.update(self._guarded(self._facts, {}))
        return facts

    @classmethod
    def stated_peaks(cls, name: str) -> DevicePeaks | None:
        """The peaks the vendor publishes for a device called ``name`` (as the device names itself, "NVIDIA
        H100 80GB HBM3"), from the plugin's table, without the device at hand; None where the table has no such
        device. Importing torch is not needed: this runs in the KForge process (``kforge check --gpu NAME``)."""
        return None

    @classmethod
    def stated_devices(cls) -> tuple[str, ...]:
        """The devices :meth:`stated_peaks` knows, as people name them (for a message that lists them)."""
        return ()

    def peaks(self, cache_dir: Path | None = None, *, remeasure: bool = False,
              memory_limit_bytes: int = 0) -> DevicePeaks | None:
        """The device's peak memory bandwidth and FLOP/s per unit, each with its source: what :meth:`_peaks`
        states (the vendor's figures), with what it lacks of the bandwidth and :attr:`measured_units` measured on
        the device once and kept under ``cache_dir`` (no ``cache_dir``: nothing is measured). None where nothing is
        known. Called in a worker as it starts, before any candidate code is imported there; ``remeasure`` measures
        again what was measured before (``kforge check --device cpu --remeasure``); a measurement keeps within
        ``memory_limit_bytes`` (the worker's ``harness.memory_limit_mb``; 0: none set)."""
        from .measured_peaks import cache_key, cached_peaks, measure_peaks

        found = self._guarded(self._peaks, None) or DevicePeaks(self.hardware_name(), None)
        missing = found.missing(self.measured_units)
        if not self.flushes_caches and not found.cache_bandwidths and self.cache_levels():
            missing += ("cache",)  # a problem that fits an unflushed cache runs from there: its bandwidth counts
        if missing and self.measured_units and cache_dir is not None:
            units = tuple(unit for unit in missing if unit not in ("memory", "cache"))
            measure = lambda: measure_peaks(self, units, bandwidth="memory" in missing,  # noqa: E731
                                            cache="cache" in missing, memory_limit_bytes=memory_limit_bytes)
            measured = self._guarded(lambda: cached_peaks(cache_dir, cache_key(self, missing), measure,
                                                          refresh=remeasure), None)
            found = found.filled_from(measured) if measured is not None else found
        if found.bandwidth is None and not found.compute:
            return None
        return self.named_units(replace(found, cache_bytes=found.cache_bytes or self.last_level_cache_bytes()))

    @classmethod
    def named_units(cls, peaks: DevicePeaks) -> DevicePeaks:
        """``peaks`` with this device's names for its vector and matrix units."""
        return replace(peaks, vector_units=cls.vector_units, matrix_units=cls.matrix_units)

    def cache_levels(self) -> tuple[int, ...]:
        """The sizes of the device's data caches from the second level up, smallest first (the last level alone by
        default; none where it is unknown)."""
        levels = self._guarded(self._cache_levels, ())
        if levels:
            return tuple(levels)
        last = self.last_level_cache_bytes()
        return (last,) if last else ()

    def last_level_cache_bytes(self) -> int:
        """The device's last-level cache, flushed or not (0: unknown): how much of a call's data may stay in
        cache from one timed run to the next, or be written back only after the timer stopped."""
        return self.cache_bytes or int(self._guarded(self._last_level_cache_bytes, 0) or 0)

    def synchronize(self) -> None:
        """Wait until all work queued on the device, on every stream or queue, has finished."""
        self._synchronize()

    @property
    def synchronize_description(self) -> str:
        """How :meth:`synchronize` waits, for the timing method."""
        return (f"torch.{self.torch_device.type}.synchronize() (device-wide: every stream); "
                "threads the candidate started during the call are joined")

    timer_description: ClassVar[str] = (
        "time.perf_counter around the call, from after the flush and drain to after the synchronize")

    def start_timer(self) -> Callable[[], float]:
        """Start a clock; the returned function gives the milliseconds since (call it after :meth:`synchronize`)."""
        start = _perf_counter()
        return lambda: (_perf_counter() - start) * 1e3

    @property
    def timers(self) -> tuple[str, ...]:
        """The timing methods this device offers (:data:`TIMERS`): the wall clock always, events and device time
        where the device has them."""
        return tuple(t for t in TIMERS if t == "wall" or (t == "events" and self.event_timer)
                     or (t == "device" and self.device_timer))

    def describe_timer(self, timer: str) -> str:
        """What ``timer`` measures on this device, for the timing method."""
        hold = f"; {EVENTS_HOLD} ({self.queue_hold})" if self.queue_hold else ""
        events = f"{self.event_timer}; {EVENTS_SEQUENCE}{hold}" if self.event_timer else ""
        return {"wall": self.timer_description, "events": events, "device": self.device_timer}[timer]

    def start_events(self) -> EventSpan:
        """Record a start event now (the ``events`` timer); call ``stop()`` when the call returns, and
        ``elapsed_ms()`` after :meth:`synchronize`."""
        if not self.event_timer:
            raise ValueError(f"the {self.label} device has no event timer")
        return EventSpan(self._event(), self._event())

    def hold(self, ms: float) -> None:
        """Before an ``events`` sample, after the flush: keep the device's queue busy for about ``ms`` (at most
        :data:`HOLD_LIMIT_MS`) without touching memory, so that the call is launched before the device reaches the
        start event. Nothing where the device cannot (:attr:`queue_hold` empty)."""
        if self.queue_hold and ms > 0:
            self._hold(min(ms, HOLD_LIMIT_MS))

    def device_clock(self) -> DeviceClock:
        """A clock of the device's busy time over a series of runs (the ``device`` timer)."""
        if not self.device_timer:
            raise ValueError(f"the {self.label} device has no device timer")
        return self._device_clock()

    def flush_caches(self) -> None:
        """Between timed runs: evict what the last run left in the device's caches."""
        if self.flush_bytes:
            self._flush()

    def poison(self, output_bytes: list[int]) -> None:
        """Before a verified call: make memory the candidate does not write recognisable (one of
        :attr:`poison_words`), so that an output taken from a recycled buffer shows. ``output_bytes`` are the sizes
        of the reference's outputs, the blocks a lazy candidate would be handed."""
        self._poison(list(output_bytes))

    def stop_poisoning(self) -> None:
        """End what :meth:`poison` started where it lasts, before anything is timed."""
        self._stop_poisoning()

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
            for word in self.poison_words:
                poisoned |= piece == _as_int32(word)
            count += int(poisoned.sum().item())
        return count / words.numel()

    def memory(self) -> MemoryStats:
        """The device's memory use now (zeros where it cannot tell)."""
        return self._guarded(self._memory, MemoryStats())

    def release_memory(self) -> None:
        """Between problems: collect the garbage, reset what ``torch.compile`` keeps (compiled graphs hold their
        tensors) and hand the allocator's cached blocks back to the device."""
        import gc

        if _dynamo_compiled():
            self._guarded(sys.modules["torch._dynamo"].reset, None)
        gc.collect()
        self.empty_cache()

    def empty_cache(self) -> None:
        """Hand the allocator's cached, unused blocks back to the device; live tensors and compiled graphs stay."""
        self._guarded(self._empty_cache, None)

    def classify(self, error: BaseException | str) -> Failure | None:
        """``Failure.DEVICE_FAULT`` or ``Failure.OUT_OF_MEMORY`` when the runtime's own error text says so."""
        text = str(error).lower()
        if any(pattern in text for pattern in self.fault_patterns):
            return Failure.DEVICE_FAULT
        if any(pattern in text for pattern in self.out_of_memory_patterns):
            return Failure.OUT_OF_MEMORY
        return None

    def changed_state(self) -> tuple[StateChange, ...]:
        """Device state the candidate changed although it must not (checked after every timed run)."""
        return tuple(self._changed_state())

    def restore_state(self) -> None:
        """Put back what :meth:`changed_state` reported."""
        self._restore_state()

    # --------------------------------------------------------------------------------------- mechanism

    def _start(self) -> None:
        """Set the runtime up (an allocator's settings); nothing by default."""

    def _module(self) -> Any:
        import torch

        return torch.get_device_module(self.torch_device.type)

    def _current_index(self) -> int | None:
        return None

    def _hardware_name(self) -> str:
        return self._module().get_device_name(self.torch_device)

    def _facts(self) -> dict[str, str]:
        return {}

    def _peaks(self) -> DevicePeaks | None:
        """The vendor's peaks for this very device (its name, and where the table is scaled, its unit count):
        :meth:`stated_peaks` of its name by default."""
        return self.stated_peaks(self.hardware_name())

    def _last_level_cache_bytes(self) -> int:
        """The last-level cache of a device that does not flush it (:attr:`cache_bytes` is 0 then)."""
        return 0

    def _cache_levels(self) -> tuple[int, ...]:
        """The data caches' sizes from the second level up, smallest first; none known by default."""
        return ()

    def _cache_bytes(self) -> int:
        props = self._module().get_device_properties(self.torch_device)
        return int(getattr(props, "L2_cache_size", 0) or 0)

    def _synchronize(self) -> None:
        self._module().synchronize()

    def _flush(self) -> None:
        """Write a buffer larger than the cache (allocated once)."""
        import torch

        if self._flush_buffer is None:
            self._flush_buffer = torch.empty(self.flush_bytes // 4, dtype=torch.int32, device=self.torch_device)
        self._flush_buffer.zero_()

    def _event(self) -> Any:
        """A timing event of the device's runtime (``record()``, ``synchronize()``, ``elapsed_time(end)``)."""
        return self._module().Event(enable_timing=True)

    def _device_clock(self) -> DeviceClock:
        raise NotImplementedError

    def _hold(self, ms: float) -> None:
        """Queue ``ms`` of busy waiting on the caller's stream (devices that set :attr:`queue_hold`)."""
        raise NotImplementedError

    def _free_block_sizes(self) -> list[int]:
        """Sizes of the blocks the runtime's allocator holds free, largest first; none known by default."""
        return []

    def _poison(self, output_bytes: list[int]) -> None:
        """Claim a block of each output size first (a best-fit allocator hands each the free block the output
        will get, or a new one where none is free), then every block still free (each by its exact size, which a
        best-fit allocator hands back), fill them with :data:`POISON_WORD`, and free them again. The other way
        round, with every free block claimed first, each output's block was a new one, and a worker's cache grew
        by the outputs' size at every trial (six trials of a 4 GiB output, 24 GiB)."""
        import torch

        def claim(size: int) -> Any:
            return torch.empty(max(size // 4, 1), dtype=torch.int32, device=self.torch_device)

        blocks = [claim(n) for n in output_bytes]
        blocks += [claim(n) for n in self._guarded(self._free_block_sizes, [])]
        for block in blocks:
            block.fill_(_as_int32(POISON_WORD))
        self.synchronize()
        del blocks

    def _stop_poisoning(self) -> None:
        """Nothing lasts by default."""

    def _memory(self) -> MemoryStats:
        module = self._module()
        total = int(getattr(module.get_device_properties(self.torch_device), "total_memory", 0) or 0)
        available = self._guarded(lambda: int(module.mem_get_info(self.torch_device)[0]), 0)
        return MemoryStats(int(module.memory_allocated(self.torch_device)),
                           int(module.memory_reserved(self.torch_device)), total, available)

    def _empty_cache(self) -> None:
        """Give the allocator's cached, unused blocks back to the device."""
        module = self._module()
        if hasattr(module, "empty_cache"):
            module.empty_cache()

    def _changed_state(self) -> list[StateChange]:
        return []

    def _restore_state(self) -> None:
        """Nothing to restore by default."""

    @staticmethod
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
