"""Where in device memory a timed call's tensors lie, spread over several places: the same places, run by run, for
the candidate and the baselines. Runs inside workers only.

The same kernel on the same data can run some 10% longer placed elsewhere in device memory (a cuDNN transposed
convolution on an H200: 2.07 ms, 2.31 ms with 32 MiB allocated before its input, and 2.07 ms with 1, 2, 4 or 512 MiB
or 3 GiB), and where a worker places a call's tensors follows what it allocated before. Timed at one place each, the
candidate's worker and the baseline worker each drew theirs by chance, and the reference given as its own candidate
came out anywhere from 0.93x to 1.06x on the device's own clock. So before each timed call's inputs are made, a pad
is allocated and held until the call's outputs are copied and dropped: its size cycles through :data:`PAD_MIB` by
the run's number, so that run ``n`` of the candidate and run ``n`` of each baseline are made behind the same pad,
and each figure is taken over the same spread of places rather than at one. The call's own allocations (outputs,
workspace) come after the pad too. The model's parameters, made once, stay where they are: a candidate's are its
own (a CUDA graph holds their addresses).

Not on the host CPU, whose allocator hands large blocks to the system and back; nor where the largest pad would
take more than :data:`MOST_SHARE_OF_AVAILABLE` of the memory available to the worker (a problem near the device's
size). ``harness.placement_spread = false`` turns it off.
"""

from __future__ import annotations

import contextlib
from dataclasses import dataclass
from typing import TYPE_CHECKING, Iterator

import torch

from ...settings import HarnessSettings

if TYPE_CHECKING:
    from ...devices.harness_device import HarnessDevice

# the pads cycled through by run number, multiples of the allocator's 2 MiB rounding: a pad takes the smallest cached
# block it fits in, so a small one moves a run's inputs out of the block the last run freed as a large one does
PAD_MIB = (0, 2, 6, 14, 32)
MOST_SHARE_OF_AVAILABLE = 1 / 16


@dataclass(frozen=True)
class PlacementSpread:
    """The pads of one block of timed runs (none: no spread)."""

    torch_device: str
    pads_bytes: tuple[int, ...] = ()

    @classmethod
    def for_block(cls, device: HarnessDevice, settings: HarnessSettings) -> PlacementSpread:
        """The spread for a block about to be timed on ``device``: none on the host CPU, with the setting off, or
        where the largest pad would take more than :data:`MOST_SHARE_OF_AVAILABLE` of the available memory (unknown
        available memory does not stop it)."""
        if device.host_cpu or not settings.placement_spread:
            return cls(str(device.torch_device))
        pads = tuple(mib << 20 for mib in PAD_MIB)
        available = device.memory().available
        if available and max(pads) > available * MOST_SHARE_OF_AVAILABLE:
            return cls(str(device.torch_device))
        return cls(str(device.torch_device), pads)

    def pad_bytes(self, run: int) -> int:
        """The pad run ``run`` is made behind (0: none)."""
        return self.pads_bytes[run % len(self.pads_bytes)] if self.pads_bytes else 0

    @contextlib.contextmanager
    def around(self, run: int) -> Iterator[None]:
        """Hold run ``run``'s pad while what the block does for that run (its inputs made, the call, its outputs
        copied) happens inside."""
        size = self.pad_bytes(run)
        pad = torch.empty(size, dtype=torch.uint8, device=self.torch_device) if size else None
        try:
            yield
        finally:
            del pad


def spread_note(device: HarnessDevice, settings: HarnessSettings) -> str:
    """What the timing method's notes say of the spread ("" where none is made)."""
    if device.host_cpu or not settings.placement_spread:
        return ""
    sizes = ", ".join(str(mib) for mib in PAD_MIB)
    return (f"each timed call's inputs made behind a pad of {sizes} MiB by the run's number, the same for the "
            "candidate and the baselines, so that both are timed over the same spread of places in device memory "
            "(none where the largest pad would take more than "
            f"1/{round(1 / MOST_SHARE_OF_AVAILABLE)} of the memory available)")
