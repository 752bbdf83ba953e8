"""The toy device: a new device type whose memory happens to be host memory (torch's ``cpu`` tensors).

It has a queue to drain, a 1 MiB cache to flush, its own poison (glibc fills every allocation made while it
poisons with 0x5A), its runtime's own fault and out-of-memory messages, and a name. With ``TOYDEVICE_TRACE`` set,
each of its methods the harness calls writes its name to that file, once per process.
"""

import contextlib
import ctypes
import os
import time

from kforge_core.device import Device, DeviceClock, MemoryStats
from kforge_core.peaks import Peak, peaks_of

NAME = "Toy Accelerator T1"
DATASHEET = "the Toy Accelerator T1 datasheet"
# Its stated peaks: far above what host memory does, so that no honest candidate comes near its floor.
BANDWIDTH = 1e12
RATES = {"fp32": 10e12, "fp16 matrix": 100e12}

_PERTURB = -6  # glibc's M_PERTURB: allocations are filled with the complement of this byte
_POISON_BYTE = 0xA5
_seen = set()


def _trace(name):
    path = os.environ.get("TOYDEVICE_TRACE")
    if path and name not in _seen:
        _seen.add(name)
        with open(path, "a") as trace:
            trace.write(f"{name}\n")


def _perturb(byte):
    ctypes.CDLL("libc.so.6").mallopt(_PERTURB, byte)


class ToyDevice(Device):
    torch_type = "cpu"
    host_cpu = True
    poison_words = (0x5A5A5A5A,)
    fault_patterns = ("toy queue lost",)
    out_of_memory_patterns = ("toy arena exhausted",)
    timer_description = "the toy clock (time.perf_counter) from after the flush to after the toy queue drained"
    synchronize_description = "the toy queue drained; threads the candidate started during the call are joined"
    event_timer = "toy events: time.perf_counter stamps when the call starts and when it returns"
    device_timer = "the toy device's busy time: CPU time of the calling thread (time.thread_time) in each run"
    measured_units = ()  # its peaks are stated: never measured
    matrix_units = "toy tensor units"

    @classmethod
    def stated_peaks(cls, name):
        if name != NAME:
            return None
        return peaks_of(name, Peak(BANDWIDTH, DATASHEET), {unit: Peak(rate, DATASHEET) for unit, rate in RATES.items()})

    def hardware_name(self):
        return NAME

    def cache_bytes(self):
        return 1 << 20

    def synchronize(self):
        _trace("synchronize")

    def flush(self, nbytes):
        _trace("flush")
        super().flush(nbytes)

    def poison(self, output_bytes):
        _trace("poison")
        _perturb(_POISON_BYTE)

    def stop_poisoning(self):
        _perturb(0)

    def event(self):
        _trace("event")
        return ToyEvent()

    def device_clock(self):
        _trace("device_clock")
        return ToyClock()

    def memory(self):
        return MemoryStats(total=1 << 30)


class ToyEvent:
    """An event of the toy runtime: a stamp of the host clock."""

    def record(self):
        self.at = time.perf_counter()

    def synchronize(self):
        pass

    def elapsed_time(self, end):
        return (end.at - self.at) * 1e3


class ToyClock(DeviceClock):
    """The toy device is busy while the calling thread computes: its CPU time in each run."""

    def __init__(self):
        self.busy = []

    @contextlib.contextmanager
    def run(self, index):
        start = time.thread_time()
        yield
        self.busy.append((time.thread_time() - start) * 1e3)

    def busy_ms(self):
        return list(self.busy)
