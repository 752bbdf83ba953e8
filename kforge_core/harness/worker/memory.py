"""What a worker gives back after a candidate: its model is dropped and the allocator's cache emptied; a worker
whose device memory stays reserved past :data:`RECYCLE_SHARE` of the device is not reused."""

from __future__ import annotations

import dataclasses
from typing import TYPE_CHECKING

from ..protocol import FinishReport

if TYPE_CHECKING:
    from ...device import Device

RECYCLE_SHARE = 0.5  # of the device's memory, still reserved after a candidate was dropped: the worker is replaced


def released(report: FinishReport, device: Device) -> FinishReport:
    """``report`` after the memory the candidate held was handed back; unclean (the worker is replaced) when the
    device still has more than :data:`RECYCLE_SHARE` of its memory reserved."""
    device.release_memory()
    memory = device.memory()
    if not memory.total or memory.reserved <= RECYCLE_SHARE * memory.total:
        return report
    note = (f"{memory.reserved / (1 << 30):.2f} GiB of the device's {memory.total / (1 << 30):.2f} GiB stayed "
            "reserved after the candidate was dropped: the worker is replaced")
    return dataclasses.replace(report, clean=False, notes=(*report.notes, note))
