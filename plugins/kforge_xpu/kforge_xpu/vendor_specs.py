"""Peak figures Intel's own specification pages state, with where each comes from.

Devices do not report their peak bandwidth or FLOP rates, and this backend does not derive them from clocks: it
quotes only a number a vendor specification states, for the products listed here, and says so. A device not listed
gets no peak (the summaries then give achieved rates without a percentage).
"""

from __future__ import annotations

from dataclasses import dataclass


@dataclass(frozen=True)
class VendorSpec:
    """One product's stated figures.

    :param marker: text that the driver's device name contains (``Arc(TM) B580``).
    :param memory_bandwidth: bytes/s of the whole card, as stated.
    :param memory_bytes: the card's memory, as stated (to tell one stack of a two-stack card from the card).
    :param stacks: the number of stacks (tiles) the card has; with the FLAT device hierarchy each is a device.
    :param source: the specification page.
    """

    marker: str
    memory_bandwidth: float
    memory_bytes: float
    stacks: int
    source: str


SPECS = (
    VendorSpec("Arc(TM) B580", 456e9, 12e9, 1,
               "Intel Arc B580 Graphics specifications, "
               "https://www.intel.com/content/www/us/en/products/sku/241598/intel-arc-b580-graphics/specifications.html"),
    VendorSpec("Data Center GPU Max 1550", 3.2768e12, 128e9, 2,
               "Intel Data Center GPU Max 1550 specifications, "
               "https://ark.intel.com/content/www/us/en/ark/products/232873/intel-data-center-gpu-max-1550.html"),
)


@dataclass(frozen=True)
class StatedBandwidth:
    """The memory bandwidth the device in hand can use, in bytes/s, and a sentence saying where it came from."""

    bytes_per_s: float
    source: str


def stated_bandwidth(device_name: str, total_memory: int) -> StatedBandwidth | None:
    """The stated bandwidth of ``device_name``, scaled to one stack when the device is one stack of a two-stack card
    (the FLAT hierarchy shows each stack as a device with its share of the memory); None for unlisted devices."""
    spec = next((s for s in SPECS if s.marker in device_name), None)
    if spec is None:
        return None
    if spec.stacks > 1 and total_memory and total_memory < 0.75 * spec.memory_bytes:
        share = 1 / spec.stacks
        return StatedBandwidth(spec.memory_bandwidth * share,
                               f"{share:.0%} of the card's stated {spec.memory_bandwidth / 1e12:.2f} TB/s: this device "
                               f"is one of its {spec.stacks} stacks ({spec.source})")
    return StatedBandwidth(spec.memory_bandwidth, f"stated by Intel ({spec.source})")
