"""What a worker gives back after a candidate: its model is dropped and the allocator's cache emptied; a worker
whose device memory stays reserved past :data:`RECYCLE_SHARE` of the device is not reused. And what a worker that
waits between requests gives back: the referee between judged calls, the baseline worker between timed blocks keep
no large cache while another process works on the device."""

from __future__ import annotations

import dataclasses
from typing import TYPE_CHECKING

from ..protocol import FinishReport

if TYPE_CHECKING:
    from ...devices.harness_device import HarnessDevice

RECYCLE_SHARE = 0.5  # of the device's memory, still reserved after a candidate was dropped: the worker is replaced
IDLE_CACHE_SHARE = 0.1  # of the device's memory, cached unused by a worker about to wait: handed back


def released(report: FinishReport, device: HarnessDevice) -> FinishReport:
    """``report`` after the memory the candidate held was handed back; unclean (the worker is replaced) when the
    device still has more than :data:`RECYCLE_SHARE` of its memory reserved."""
    device.release_memory()
    memory = device.memory()
    if not memory.total or memory.reserved <= RECYCLE_SHARE * memory.total:
        return report
    note = (f"{memory.reserved / (1 << 30):.2f} GiB of the device's {memory.total / (1 << 30):.2f} GiB stayed "
            "reserved after the candidate was dropped: the worker is replaced")
    return dataclasses.replace(report, clean=False, notes=(*report.notes, note))


def hand_back_idle_cache(device: HarnessDevice, *, large: bool = False) -> bool:
    """After a request, in a worker that now waits while others use the device: when its allocator caches more
    than :data:`IDLE_CACHE_SHARE` of the device unused (a large problem's outputs, the float64 reference), or
    anything unused at all while the problem is ``large`` for the device (``problem_size``), hand it back, so that
    three workers' caches of a problem near the device's size never add up. Small problems keep their cache
    (nothing to gain, and their next calls reuse it). True when it was handed back."""
    memory = device.memory()
    unused = memory.reserved - memory.allocated
    if not memory.total or unused <= (0 if large else IDLE_CACHE_SHARE * memory.total):
        return False
    device.empty_cache()
    return True
