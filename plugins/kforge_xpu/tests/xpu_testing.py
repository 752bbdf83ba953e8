"""Stand-ins and paths shared by the kforge_xpu tests. No Intel GPU is available where these tests run, so the
device layer is tested against :class:`StandInXpu`, an explicit stand-in for the ``torch.xpu`` module that a test
passes in where production code takes the real one."""

from __future__ import annotations

from pathlib import Path
from types import SimpleNamespace

HERE = Path(__file__).resolve().parent
FIXTURES = HERE / "fixtures"
CANDIDATES = HERE / "candidates"
EXAMPLE = HERE.parent / "kforge_xpu" / "example"


def b580_properties(**changes) -> SimpleNamespace:
    """An Arc B580 as ``torch.xpu.get_device_properties`` describes it. The values are those PyTorch Inductor
    recorded for an 'Intel(R) Arc(TM) B580 Graphics' in a generated kernel's DeviceProperties (published in a
    public repository); local_mem_size and last_level_cache_size are not in that record and are stand-ins."""
    values = dict(
        name="Intel(R) Arc(TM) B580 Graphics", platform_name="Intel(R) oneAPI Unified Runtime over Level-Zero",
        driver_version="1.6.33578+13", gpu_eu_count=160, gpu_subslice_count=20, max_compute_units=160,
        max_num_sub_groups=64, max_work_group_size=1024, sub_group_sizes=[16, 32], total_memory=12168933376,
        has_fp64=True, has_subgroup_matrix_multiply_accumulate=True,
        has_subgroup_matrix_multiply_accumulate_tensor_float32=False, has_subgroup_2d_block_io=True,
        local_mem_size=131072, last_level_cache_size=18 * 2**20,
    )
    values.update(changes)
    return SimpleNamespace(**values)


class StandInEvent:
    """``torch.xpu.Event(enable_timing=True)``: record() takes the stand-in device's clock."""

    def __init__(self, device: "StandInXpu", enable_timing: bool = False) -> None:
        self.device, self.enable_timing, self.at_ms = device, enable_timing, None

    def record(self, stream=None) -> None:
        self.device.calls.append("event.record")
        self.at_ms = self.device.clock_ms

    def synchronize(self) -> None:
        self.device.calls.append("event.synchronize")

    def elapsed_time(self, end: "StandInEvent") -> float:
        if not (self.enable_timing and end.enable_timing):
            raise RuntimeError("Both events must be created with argument 'enable_timing=True'.")
        return end.at_ms - self.at_ms


class StandInXpu:
    """A stand-in for ``torch.xpu``: one device, a clock the test advances, memory figures the test sets, and a
    log of the calls made on it."""

    def __init__(self, properties: SimpleNamespace | None = None, devices: int = 1) -> None:
        self.properties = properties or b580_properties()
        self.devices = devices
        self.calls: list[str] = []
        self.clock_ms = 0.0
        self.allocated, self.reserved, self.peak, self.free = 0, 0, 0, self.properties.total_memory
        self.snapshot: list[dict] = []
        self.raise_on_synchronize: BaseException | None = None

    def device_count(self) -> int:
        return self.devices

    def is_available(self) -> bool:
        return self.devices > 0

    def current_device(self) -> int:
        return 0

    def get_device_properties(self, index=None) -> SimpleNamespace:
        return self.properties

    def synchronize(self, device=None) -> None:
        self.calls.append("synchronize")
        if self.raise_on_synchronize is not None:
            raise self.raise_on_synchronize

    def Event(self, enable_timing: bool = False) -> StandInEvent:  # noqa: N802 (torch's name)
        return StandInEvent(self, enable_timing)

    def memory_allocated(self, device=None) -> int:
        return self.allocated

    def memory_reserved(self, device=None) -> int:
        return self.reserved

    def max_memory_allocated(self, device=None) -> int:
        return self.peak

    def mem_get_info(self, device=None) -> tuple[int, int]:
        return self.free, self.properties.total_memory

    def memory_snapshot(self) -> list[dict]:
        return self.snapshot
