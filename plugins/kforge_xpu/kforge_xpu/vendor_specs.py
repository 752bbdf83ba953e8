"""Peak figures Intel's own specification pages state, with where each comes from.

Devices do not report their peak bandwidth or FLOP rates, and this backend does not derive them from clocks: it
quotes only a number a vendor specification states, for the products listed here, and says so (a rate that follows
from a stated one, the XMX fp16 rate as half the stated INT8 rate, says that too). A device not listed gets no
stated peak: its speed-of-light bound then uses figures measured on it (``Device.peaks``).
"""

from __future__ import annotations

from dataclasses import dataclass, field

from kforge_core.plugin_api import DevicePeaks, Peak, peaks_of

T = 1e12


@dataclass(frozen=True)
class VendorSpec:
    """One product's stated figures.

    :param marker: text that the driver's device name contains (``Arc(TM) B580``).
    :param memory_bandwidth: bytes/s of the whole card, as stated.
    :param memory_bytes: the card's memory, as stated (to tell one stack of a two-stack card from the card).
    :param stacks: the number of stacks (tiles) the card has; with the FLAT device hierarchy each is a device.
    :param source: the specification page.
    :param rates: unit (``kforge_core.peaks.UNITS``) -> dense FLOP/s (or OP/s) of the whole card, as stated.
    :param derived: units whose rate follows from a stated one, and how.
    """

    marker: str
    memory_bandwidth: float
    memory_bytes: float
    stacks: int
    source: str
    rates: dict[str, float] = field(default_factory=dict)
    derived: tuple[tuple[str, str], ...] = ()


SPECS = (
    VendorSpec("Arc(TM) B580", 456e9, 12e9, 1,
               "Intel Arc B580 Graphics specifications, "
               "https://www.intel.com/content/www/us/en/products/sku/241598/intel-arc-b580-graphics/specifications.html",
               {"int8 matrix": 233 * T, "fp16 matrix": 116.5 * T, "bf16 matrix": 116.5 * T},
               (("fp16 matrix", "half the stated 233 INT8 TOPS: XMX's 16-bit rate"),
                ("bf16 matrix", "half the stated 233 INT8 TOPS: XMX's 16-bit rate"))),
    VendorSpec("Data Center GPU Max 1550", 3.2768e12, 128e9, 2,
               "Intel Data Center GPU Max 1550 specifications, "
               "https://ark.intel.com/content/www/us/en/ark/products/232873/intel-data-center-gpu-max-1550.html",
               {"fp64": 52.4 * T, "fp32": 52.4 * T, "tf32 matrix": 419.4 * T, "fp16 matrix": 838.9 * T,
                "bf16 matrix": 838.9 * T, "int8 matrix": 1677.7 * T}),
)


@dataclass(frozen=True)
class StatedBandwidth:
    """The memory bandwidth the device in hand can use, in bytes/s, and a sentence saying where it came from."""

    bytes_per_s: float
    source: str


def _share(spec: VendorSpec, total_memory: int) -> float:
    """1, or one stack's share when the device is one stack of a card of several (the FLAT hierarchy shows each
    stack as a device with its share of the memory)."""
    return 1 / spec.stacks if spec.stacks > 1 and total_memory and total_memory < 0.75 * spec.memory_bytes else 1.0


def stated_peaks(device_name: str, total_memory: int = 0) -> DevicePeaks | None:
    """The stated peaks of ``device_name`` (its bandwidth and rates, each scaled to one stack as the bandwidth is);
    None for unlisted devices."""
    spec = next((s for s in SPECS if s.marker in device_name), None)
    bandwidth = stated_bandwidth(device_name, total_memory)
    if spec is None or bandwidth is None:
        return None
    share, derived = _share(spec, total_memory), dict(spec.derived)
    stack = f", {share:.0%} of the card's: this device is one of its {spec.stacks} stacks" if share < 1 else ""
    rates = {unit: Peak(value * share, f"{derived.get(unit, 'stated by Intel')} ({spec.source}){stack}")
             for unit, value in spec.rates.items()}
    return peaks_of(device_name, Peak(bandwidth.bytes_per_s, bandwidth.source), rates)


def stated_bandwidth(device_name: str, total_memory: int) -> StatedBandwidth | None:
    """The stated bandwidth of ``device_name``, scaled to one stack when the device is one stack of a two-stack card
    (the FLAT hierarchy shows each stack as a device with its share of the memory); None for unlisted devices."""
    spec = next((s for s in SPECS if s.marker in device_name), None)
    if spec is None:
        return None
    share = _share(spec, total_memory)
    if share < 1:
        return StatedBandwidth(spec.memory_bandwidth * share,
                               f"{share:.0%} of the card's stated {spec.memory_bandwidth / 1e12:.2f} TB/s: this device "
                               f"is one of its {spec.stacks} stacks ({spec.source})")
    return StatedBandwidth(spec.memory_bandwidth, f"stated by Intel ({spec.source})")
