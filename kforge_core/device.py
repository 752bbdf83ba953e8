"""The device a backend runs on: what a vendor writes, and only what a vendor can answer.

A plugin hands its device to the core as a class, ``Backend(device_class=MyDevice)``: a :class:`Device` subclass
that states what its device is in class attributes (its torch device type, its runtime's fault texts, its timers)
and fills in the methods that differ from a torch device's (how to wait for it, read its memory, time it, flush and
poison it, what it is and how fast). Each method has a default that serves any torch device type through
``torch.get_device_module``. The harness's policy around it (the timers and how a sample is taken, the size of a
flush, how poisoned an output is, the facts a prompt quotes, measuring the peaks a vendor does not state, fault
classification) is the core's: :class:`~kforge_core.devices.harness_device.HarnessDevice`, which each worker wraps
around one instance, as tinygrad's ``Compiled`` takes a device's parts. :class:`~kforge_core.devices.cpu.CpuDevice`
(the core's built-in, used when a backend names no class) and ``kforge_nvidia.device.CudaDevice`` are the first two
implementations; ``tests/plugins/kforge_toydevice`` is a whole new device.

Importing this module does not import torch, so a plugin can name its device class when it registers its backend;
a device module must keep it that way (import torch inside methods).
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import TYPE_CHECKING, Any, ClassVar, ContextManager

if TYPE_CHECKING:
    from .peaks import DevicePeaks
    from .records import Backend

#: The timing methods, in the order figures are shown: the host clock, device events around the call, and the
#: device's own records of the work it ran (every stream). ``docs/timing.md`` says what each measures.
TIMERS = ("wall", "events", "device")
POISON_WORD = 0x7FC0DEAD  # a float32 NaN with a payload nothing computes by accident
FALLBACK_FLUSH_BYTES = 256 * 1024 * 1024
# What Triton's do_bench and KernelBench's CUDA-event timing write to flush the L2 before a timed call. Devices timed
# by events flush at least this much, so that the host's launch of the call overlaps a flush of the same length as
# theirs (:data:`EVENTS_SEQUENCE`) and the ``events`` figures mean what the field's mean.
FIELD_FLUSH_BYTES = 256 * 1024 * 1024
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
    """What a vendor writes for its device: facts stated as class attributes, and the methods only the device can
    answer. Runs inside workers (and, for the class attributes and :meth:`stated_peaks`, anywhere). Fill in what
    differs from a torch device's defaults; the harness never calls these directly but through its policy
    (:class:`~kforge_core.devices.harness_device.HarnessDevice`), which also guards the facts a runtime may not offer.

    :param backend: the backend being served; ``backend.device`` names the torch device type unless the class sets
        :attr:`torch_type`.
    """

    #: The torch device type tensors live on ("cuda", "mps", "xpu", "cpu"); empty: ``backend.device``.
    torch_type: ClassVar[str] = ""
    #: True when candidates run on the host's own cores: builds ahead then never run beside a timed run, and the
    #: worker's address space may be limited (``harness.memory_limit_mb``).
    host_cpu: ClassVar[bool] = False
    #: True when the device's tensors live in host memory (the host CPU, or a device served through it): its peaks
    #: are measured at the host's sizes.
    host_memory: ClassVar[bool] = False
    #: Whether timing writes a buffer between timed runs to flush the device's caches (:meth:`flush`).
    flushes_caches: ClassVar[bool] = True
    #: The least a flush writes whatever the cache's size (unless ``harness.l2_flush_bytes`` says): accelerators
    #: timed by events set :data:`FIELD_FLUSH_BYTES`, the field's flush, whose length is the launch window the
    #: ``events`` timer leaves uncounted.
    flush_floor_bytes: ClassVar[int] = 0
    #: Which figure of the timed runs is the runtime (``TimingMethod.statistic``): "median", or "min" where the
    #: device's cores are shared with everything else the host runs, so that other work only ever slows a run down.
    headline_statistic: ClassVar[str] = "median"
    #: In how many blocks a callable's timed runs are taken, in turn with the baselines'
    #: (``harness/host/baselines_window.py``): more and shorter blocks where the machine's load changes within a
    #: second, so that a quiet stretch falls on the candidate's runs and the baselines' alike.
    timing_blocks: ClassVar[int] = 4
    #: How near a baseline's fresh first block must come to a figure measured before (the baseline cache, an
    #: earlier candidate's window) for that figure to stand (``harness/host/baselines_window.py``); None: never, the
    #: device's timings drift past any band that keeps a speedup honest, so baselines are measured in full beside
    #: every candidate.
    prior_band: ClassVar[float | None] = 0.03
    #: How fast the device clears memory a process hands back before any process may have it again, in bytes per
    #: second, where that clearing runs on the device beside other processes' work and slows it (a memory-bound
    #: kernel of another process runs slower while it lasts); None: nothing runs after a hand-back. A process that
    #: handed back its cache waits that long (:meth:`HarnessDevice.empty_cache`), so that the clearing is over before
    #: another worker's timed runs begin. State it below the rate measured, so that the wait covers the clearing.
    cleared_bytes_per_s: ClassVar[float | None] = None
    #: The ``torch.profiler.ProfilerActivity`` that traces this device's kernels ("CUDA", "XPU"); empty: none.
    profiler_activity: ClassVar[str] = ""
    #: What the ``wall`` timer is on this device: the host clock around the call.
    timer_description: ClassVar[str] = (
        "time.perf_counter around the call, from after the flush and drain to after the synchronize")
    #: How :meth:`synchronize` waits, for the timing method; empty: ``torch.<type>.synchronize()``, device-wide.
    synchronize_description: ClassVar[str] = ""
    #: What the ``events`` timer is on this device ("torch.cuda.Event pairs on the current stream"); empty: none
    #: (:meth:`event` makes one event).
    event_timer: ClassVar[str] = ""
    #: What the ``device`` timer reads on this device; empty: none (:meth:`device_clock` makes the clock).
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
    #: The compute units (``kforge_core.peaks.UNITS``) measured on the device where :meth:`peaks` states no figure
    #: for them, with the memory bandwidth where it states none: the units this kind of device has and kernels use.
    #: Empty: the device is never measured.
    measured_units: ClassVar[tuple[str, ...]] = ("fp32",)
    #: What the device's vector and matrix units are called, in the peaks' descriptions.
    vector_units: ClassVar[str] = "vector units"
    matrix_units: ClassVar[str] = "matrix units"

    def __init__(self, backend: Backend) -> None:
        import torch

        self.backend = backend
        self.torch_device = torch.device(self.torch_type or backend.device)
        self._flush_buffer: Any = None

    # ------------------------------------------------------------------------------------ what it is

    def start(self) -> None:
        """Once per worker, before the reference runs: set the runtime up (an allocator's settings)."""

    def current_index(self) -> int | None:
        """The unit the process uses when the torch device names none (``torch.cuda.current_device()``)."""
        return None

    def hardware_name(self) -> str:
        """What the device is ("NVIDIA H100 80GB HBM3", "Apple M3 Max")."""
        return self._module().get_device_name(self.torch_device)

    def facts(self) -> dict[str, str]:
        """Facts a prompt or a profile summary may quote beyond its name, memory and cache (its compute
        capability, its cores)."""
        return {}

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

    def peaks(self) -> DevicePeaks | None:
        """The vendor's peaks for this very device (its name, and where the table is scaled, its unit count):
        :meth:`stated_peaks` of its name by default. What it lacks is measured by the harness."""
        return self.stated_peaks(self.hardware_name())

    def cache_bytes(self) -> int:
        """The cache timing flushes between runs (the L2), 0 where there is none to flush."""
        props = self._module().get_device_properties(self.torch_device)
        return int(getattr(props, "L2_cache_size", 0) or 0)

    def cache_levels(self) -> tuple[int, ...]:
        """The sizes of the device's data caches from the second level up, smallest first; none known by
        default (the flushed cache is then the last level)."""
        return ()

    # ----------------------------------------------------------------------- waiting, timing, flushing

    def synchronize(self) -> None:
        """Wait until all work queued on the device, on every stream or queue, has finished."""
        self._module().synchronize()

    def event(self) -> Any:
        """A timing event of the device's runtime (``record()``, ``synchronize()``, ``elapsed_time(end)``)."""
        return self._module().Event(enable_timing=True)

    def device_clock(self) -> DeviceClock:
        """A clock of the device's busy time over a series of runs (devices that set :attr:`device_timer`)."""
        raise NotImplementedError

    def hold(self, ms: float) -> None:
        """Queue ``ms`` of busy waiting on the caller's stream (devices that set :attr:`queue_hold`)."""
        raise NotImplementedError

    def flush(self, nbytes: int) -> None:
        """Evict what the last run left in the caches: write ``nbytes`` (allocated once)."""
        import torch

        if self._flush_buffer is None:
            self._flush_buffer = torch.empty(nbytes // 4, dtype=torch.int32, device=self.torch_device)
        self._flush_buffer.zero_()

    # ------------------------------------------------------------------------------ memory and state

    def memory(self) -> MemoryStats:
        """The device's memory use now."""
        module = self._module()
        total = int(getattr(module.get_device_properties(self.torch_device), "total_memory", 0) or 0)
        try:
            available = int(module.mem_get_info(self.torch_device)[0])
        except Exception:  # a runtime without it: unknown
            available = 0
        return MemoryStats(int(module.memory_allocated(self.torch_device)),
                           int(module.memory_reserved(self.torch_device)), total, available)

    def empty_cache(self) -> None:
        """Give the allocator's cached, unused blocks back to the device."""
        module = self._module()
        if hasattr(module, "empty_cache"):
            module.empty_cache()

    def free_block_sizes(self) -> list[int]:
        """Sizes of the blocks the runtime's allocator holds free, largest first; none known by default."""
        return []

    def poison(self, output_bytes: list[int]) -> None:
        """Before a verified call: make memory the candidate does not write recognisable (one of
        :attr:`poison_words`), so that an output taken from a recycled buffer shows. ``output_bytes`` are the sizes
        of the reference's outputs, the blocks a lazy candidate would be handed.

        By default: claim a block of each output size first (a best-fit allocator hands each the free block the
        output will get, or a new one where none is free), then every block still free (each by its exact size,
        which a best-fit allocator hands back), fill them with :data:`POISON_WORD`, and free them again. The other
        way round, with every free block claimed first, each output's block was a new one, and a worker's cache grew
        by the outputs' size at every trial (six trials of a 4 GiB output, 24 GiB)."""
        import torch

        def claim(size: int) -> Any:
            return torch.empty(max(size // 4, 1), dtype=torch.int32, device=self.torch_device)

        word = POISON_WORD - (1 << 32) if POISON_WORD >= 1 << 31 else POISON_WORD
        blocks = [claim(n) for n in output_bytes]
        try:
            free = self.free_block_sizes()
        except Exception:  # an allocator that cannot say: the outputs' blocks are poisoned still
            free = []
        blocks += [claim(n) for n in free]
        for block in blocks:
            block.fill_(word)
        self.synchronize()
        del blocks

    def stop_poisoning(self) -> None:
        """End what :meth:`poison` started where it lasts, before anything is timed; nothing lasts by default."""

    def changed_state(self) -> list[StateChange]:
        """Device state the candidate changed although it must not (checked after every timed run)."""
        return []

    def restore_state(self) -> None:
        """Put back what :meth:`changed_state` reported; nothing to restore by default."""

    def _module(self) -> Any:
        import torch

        return torch.get_device_module(self.torch_device.type)
