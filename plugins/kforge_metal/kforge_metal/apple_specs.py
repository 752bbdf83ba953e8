"""Peak figures Apple publishes for its chips: the unified memory bandwidth of every M1-M4 chip, and the GPU's
fp32 TFLOPS where Apple stated it (the M1 and M2 families), scaled to the GPU cores of the part in hand (a binned
chip has fewer). Apple states no rate for the M3 and M4 GPUs: those are measured on the device (``Device.peaks``).

The figures are Apple's newsroom announcements and the chips' technical specifications, by chip; the device is
found by the name it gives ("Apple M3 Max, 40-core GPU").

Importing this module does not import torch.
"""

from __future__ import annotations

import re
from dataclasses import dataclass

from kforge_core.plugin_api import DevicePeaks, Peak, peaks_of


@dataclass(frozen=True)
class ChipSpec:
    """One chip (or one GPU variant of it).

    :param chip: "M3 Max".
    :param bandwidth: bytes/s of its unified memory.
    :param fp32: the GPU's stated fp32 FLOP/s for ``cores`` GPU cores; 0 where Apple states none.
    :param cores: the GPU cores of the stated figure (and of the bandwidth, for chips whose bandwidth differs by
        variant: the variant with at most this many cores).
    """

    chip: str
    bandwidth: float
    fp32: float = 0.0
    cores: int = 0


G, T = 1e9, 1e12
CHIPS: tuple[ChipSpec, ...] = (
    ChipSpec("M1", 68.25 * G, 2.6 * T, 8), ChipSpec("M1 Pro", 200 * G, 5.2 * T, 16),
    ChipSpec("M1 Max", 400 * G, 10.4 * T, 32), ChipSpec("M1 Ultra", 800 * G, 21 * T, 64),
    ChipSpec("M2", 100 * G, 3.6 * T, 10), ChipSpec("M2 Pro", 200 * G, 6.8 * T, 19),
    ChipSpec("M2 Max", 400 * G, 13.6 * T, 38), ChipSpec("M2 Ultra", 800 * G, 27.2 * T, 76),
    ChipSpec("M3", 100 * G), ChipSpec("M3 Pro", 150 * G),
    ChipSpec("M3 Max", 300 * G, cores=30), ChipSpec("M3 Max", 400 * G, cores=40), ChipSpec("M3 Ultra", 819 * G),
    ChipSpec("M4", 120 * G), ChipSpec("M4 Pro", 273 * G),
    ChipSpec("M4 Max", 410 * G, cores=32), ChipSpec("M4 Max", 546 * G, cores=40),
)
_NAME = re.compile(r"Apple (M\d)( Pro| Max| Ultra)?\b(?:.*?(\d+)-core GPU)?")


def chip_spec(name: str) -> tuple[ChipSpec, int] | None:
    """The spec of the chip ``name`` names and its GPU cores (0: not said), or None for an unlisted chip."""
    match = _NAME.search(name)
    if match is None:
        return None
    chip, cores = match.group(1) + (match.group(2) or ""), int(match.group(3) or 0)
    variants = [spec for spec in CHIPS if spec.chip == chip]
    if not variants:
        return None
    fitting = [spec for spec in variants if not spec.cores or not cores or cores <= spec.cores]
    return (fitting[0] if fitting else variants[-1]), cores


def apple_peaks(name: str) -> DevicePeaks | None:
    """Apple's figures for the chip ``name`` names: its memory bandwidth and, where stated, the GPU's fp32 rate."""
    found = chip_spec(name)
    if found is None:
        return None
    spec, cores = found
    source = f"Apple's published specifications of the {spec.chip}"
    rates = {}
    if spec.fp32:
        share = cores / spec.cores if cores and spec.cores else 1.0
        scaled = f", scaled to {cores} of the {spec.cores} GPU cores it is stated for" if share != 1 else ""
        rates["fp32"] = Peak(spec.fp32 * share, f"{source} ({spec.fp32 / T:g} TFLOPS, {spec.cores}-core GPU){scaled}")
    return peaks_of(name, Peak(spec.bandwidth, source), rates)
