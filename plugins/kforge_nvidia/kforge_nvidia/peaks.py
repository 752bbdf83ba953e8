"""An NVIDIA GPU's peaks: memory bandwidth and dense FLOP/s per unit (CUDA cores, tensor cores), with their sources.

NVIDIA GPUs do not report peak rates. For the parts listed in :data:`DATASHEETS` (found by the name the driver
gives) the figures are NVIDIA's datasheet's, dense (its tensor-core figures "with sparsity" halved), scaled to the
SM count the device reports where that is fewer (a MIG instance). Other parts get figures derived from the device's
facts: SM count x SM clock (from the driver) x the per-SM rate of the architecture (:data:`PER_SM_PER_CLOCK`), and
the bandwidth from the memory clock and bus width; what neither gives is measured (``Device.peaks``).

Importing this module does not import torch.
"""

from __future__ import annotations

import re
from dataclasses import dataclass

from kforge_core.plugin_api import DevicePeaks, Peak, peaks_of

T = 1e12


@dataclass(frozen=True)
class Datasheet:
    """One product's published figures.

    :param marker: text the driver's device name contains ("H100 80GB HBM3"); the longest matching marker wins.
    :param product: the product, as the datasheet names it.
    :param sms: the SM count the figures are for.
    :param bandwidth: bytes/s.
    :param rates: unit -> dense FLOP/s.
    :param source: the datasheet.
    :param derived: units whose figure the datasheet does not print, taken from the architecture's whitepaper
        (16-bit math on CUDA cores), said in their source.
    :param aliases: other names people give the product (``kforge check --gpu "H100 SXM"``).
    """

    marker: str
    product: str
    sms: int
    bandwidth: float
    rates: dict[str, float]
    source: str
    derived: tuple[str, ...] = ()
    aliases: tuple[str, ...] = ()


_HOPPER_SXM = {"fp64": 34 * T, "fp64 matrix": 67 * T, "fp32": 67 * T, "fp16": 133.8 * T, "bf16": 133.8 * T,
               "tf32 matrix": 494.7 * T, "fp16 matrix": 989.4 * T, "bf16 matrix": 989.4 * T,
               "fp8 matrix": 1978.9 * T, "int8 matrix": 1978.9 * T}
_HOPPER_NVL = {"fp64": 30 * T, "fp64 matrix": 60 * T, "fp32": 60 * T, "fp16": 120 * T, "bf16": 120 * T,
               "tf32 matrix": 417.5 * T, "fp16 matrix": 835.5 * T, "bf16 matrix": 835.5 * T,
               "fp8 matrix": 1670.5 * T, "int8 matrix": 1670.5 * T}
_A100 = {"fp64": 9.7 * T, "fp64 matrix": 19.5 * T, "fp32": 19.5 * T, "fp16": 78 * T, "bf16": 39 * T,
         "tf32 matrix": 156 * T, "fp16 matrix": 312 * T, "bf16 matrix": 312 * T, "int8 matrix": 624 * T}
_16_BIT = ("fp16", "bf16")  # 16-bit math on CUDA cores: in the architecture's whitepaper, not in the datasheets

DATASHEETS: tuple[Datasheet, ...] = (
    Datasheet("H100 80GB HBM3", "H100 SXM5", 132, 3.35e12, _HOPPER_SXM, "NVIDIA H100 datasheet (SXM5)", _16_BIT,
              aliases=("H100 SXM", "H100")),
    Datasheet("H100 PCIe", "H100 PCIe", 114, 2.0e12,
              {"fp64": 25.6 * T, "fp64 matrix": 51.2 * T, "fp32": 51.2 * T, "fp16": 102.4 * T, "bf16": 102.4 * T,
               "tf32 matrix": 378 * T, "fp16 matrix": 756.5 * T, "bf16 matrix": 756.5 * T,
               "fp8 matrix": 1513 * T, "int8 matrix": 1513 * T},
              "NVIDIA H100 datasheet (PCIe)", _16_BIT),
    Datasheet("H100 NVL", "H100 NVL", 132, 3.9e12, _HOPPER_NVL, "NVIDIA H100 datasheet (NVL)", _16_BIT),
    Datasheet("H200", "H200 SXM", 132, 4.8e12, _HOPPER_SXM, "NVIDIA H200 datasheet (SXM)", _16_BIT,
              aliases=("H200 SXM5",)),
    Datasheet("H200 NVL", "H200 NVL", 132, 4.8e12, _HOPPER_NVL, "NVIDIA H200 datasheet (NVL)", _16_BIT),
    Datasheet("B200", "B200", 148, 8.0e12,
              {"fp64": 37 * T, "fp64 matrix": 37 * T, "fp32": 75 * T, "tf32 matrix": 1125 * T,
               "fp16 matrix": 2250 * T, "bf16 matrix": 2250 * T, "fp8 matrix": 4500 * T, "int8 matrix": 4500 * T},
              "NVIDIA HGX B200 datasheet, per GPU (the 8-GPU figures divided by 8)"),
    Datasheet("A100-SXM4-80GB", "A100 SXM4 80GB", 108, 2.039e12, _A100, "NVIDIA A100 datasheet (SXM4 80GB)", _16_BIT),
    Datasheet("A100-SXM4-40GB", "A100 SXM4 40GB", 108, 1.555e12, _A100, "NVIDIA A100 datasheet (SXM4 40GB)", _16_BIT),
    Datasheet("A100 80GB PCIe", "A100 PCIe 80GB", 108, 1.935e12, _A100, "NVIDIA A100 datasheet (PCIe 80GB)", _16_BIT),
    Datasheet("A100-PCIE-40GB", "A100 PCIe 40GB", 108, 1.555e12, _A100, "NVIDIA A100 datasheet (PCIe 40GB)", _16_BIT),
    Datasheet("L40S", "L40S", 142, 864e9,
              {"fp32": 91.6 * T, "tf32 matrix": 183 * T, "fp16 matrix": 362.05 * T, "bf16 matrix": 362.05 * T,
               "fp8 matrix": 733 * T, "int8 matrix": 733 * T}, "NVIDIA L40S datasheet"),
)

# Dense FLOP (or integer op) per clock per SM, by compute capability, for parts without a datasheet here. Tensor
# rates are the dense ones with fp32 accumulation where the part allows it. Architectures whose tensor rates differ
# between products (8.6, 8.9, 12.0) list only their CUDA-core rates: their tensor cores are measured.
PER_SM_PER_CLOCK: dict[tuple[int, int], dict[str, int]] = {
    (7, 0): {"fp64": 64, "fp32": 128, "fp16": 256, "fp16 matrix": 1024},
    (7, 5): {"fp64": 4, "fp32": 128, "fp16": 256, "fp16 matrix": 1024},
    (8, 0): {"fp64": 64, "fp64 matrix": 128, "fp32": 128, "fp16": 512, "bf16": 256, "tf32 matrix": 1024,
             "fp16 matrix": 2048, "bf16 matrix": 2048, "int8 matrix": 4096},
    (8, 6): {"fp64": 4, "fp32": 256},
    (8, 9): {"fp64": 4, "fp32": 256},
    (9, 0): {"fp64": 128, "fp64 matrix": 256, "fp32": 256, "fp16": 512, "bf16": 512, "tf32 matrix": 2048,
             "fp16 matrix": 4096, "bf16 matrix": 4096, "fp8 matrix": 8192, "int8 matrix": 8192},
    (10, 0): {"fp64": 128, "fp32": 256, "tf32 matrix": 4096, "fp16 matrix": 8192, "bf16 matrix": 8192,
              "fp8 matrix": 16384},
    (12, 0): {"fp64": 4, "fp32": 256},
}


def datasheet_of(name: str) -> Datasheet | None:
    """The datasheet of the GPU the driver calls ``name`` (the longest marker it contains), or None."""
    typed = name.strip().lower().removeprefix("nvidia ")
    named = [sheet for sheet in DATASHEETS if typed in (sheet.product.lower(), *(a.lower() for a in sheet.aliases))]
    if named:  # a product as people name it
        return named[0]
    # a whole word of the driver's name: "NVIDIA GH200 480GB" is no H200
    found = [sheet for sheet in DATASHEETS
             if re.search(rf"(?<![A-Za-z0-9]){re.escape(sheet.marker)}", name, re.IGNORECASE)]
    return max(found, key=lambda sheet: len(sheet.marker)) if found else None


def datasheet_names() -> tuple[str, ...]:
    """The listed products, as ``kforge check --gpu`` takes them."""
    return tuple(sheet.product for sheet in DATASHEETS)


def datasheet_peaks(name: str, sm_count: int = 0) -> DevicePeaks | None:
    """The datasheet's peaks for the GPU called ``name``, scaled to ``sm_count`` SMs where the device has fewer
    than the product (a MIG instance: its share of the memory bandwidth is taken as its share of the SMs)."""
    sheet = datasheet_of(name)
    if sheet is None:
        return None
    share = sm_count / sheet.sms if 0 < sm_count < sheet.sms else 1.0
    scaled = f", scaled to {sm_count} of its {sheet.sms} SMs" if share < 1 else ""
    rates = {}
    for unit, value in sheet.rates.items():
        source = (f"the architecture's whitepaper (16-bit CUDA-core math, which the {sheet.source} does not list)"
                  if unit in sheet.derived else sheet.source)
        rates[unit] = Peak(value * share, source + scaled)
    notes = (f"{sheet.product} figures scaled to the {sm_count} SMs this device has (of {sheet.sms}); the memory "
             "bandwidth by the same share, approximately",) if share < 1 else ()
    device = name if name.lower().startswith("nvidia") else f"NVIDIA {sheet.product}"  # the driver's, or typed
    return peaks_of(device, Peak(sheet.bandwidth * share, sheet.source + scaled), rates, notes=notes)


def derived_peaks(name: str, capability: tuple[int, int], sm_count: int, sm_clock_khz: int,
                  memory_clock_khz: int, bus_bits: int) -> DevicePeaks | None:
    """Peaks from the device's facts for a GPU without a datasheet here: ``sm_count`` x the SM clock x the per-SM
    rate of ``capability``; bandwidth = 2 (double data rate) x the memory clock x the bus width."""
    bandwidth = 2.0 * memory_clock_khz * 1e3 * bus_bits / 8 if memory_clock_khz and bus_bits else 0.0
    clock_ghz = sm_clock_khz / 1e6
    per_sm = PER_SM_PER_CLOCK.get(capability, {}) if clock_ghz and sm_count else {}
    source = (f"derived from the device's facts: {sm_count} SMs x {clock_ghz:.2f} GHz (the driver's SM clock) x the "
              f"per-SM rate of compute capability {capability[0]}.{capability[1]}")
    rates = {unit: Peak(sm_count * clock_ghz * 1e9 * rate, source) for unit, rate in per_sm.items()}
    memory = Peak(bandwidth, f"derived from the device's facts: 2 x the memory clock {memory_clock_khz / 1e3:.0f} MHz "
                             f"x the {bus_bits}-bit bus (the driver's)") if bandwidth else None
    if memory is None and not rates:
        return None
    return peaks_of(name, memory, rates)


def gpu_peaks(name: str, capability: tuple[int, int], sm_count: int, sm_clock_khz: int, memory_clock_khz: int,
              bus_bits: int) -> DevicePeaks | None:
    """The datasheet's peaks where the part is listed, else the peaks derived from its facts."""
    return datasheet_peaks(name, sm_count) or derived_peaks(name, capability, sm_count, sm_clock_khz,
                                                            memory_clock_khz, bus_bits)
