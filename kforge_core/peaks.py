"""A device's peaks: the fastest it can move memory and do arithmetic, each figure with where it comes from.

A device answers them (``Device.peaks``): from its vendor's published table where the device can be named, else
measured once on the device (a STREAM-like copy, a large GEMM) and cached. The speed-of-light bound of a problem
(:mod:`kforge_core.speed_of_light`) and the physical floor behind the ``faster_than_hardware`` flag are computed
from them in the KForge process.

FLOP rates are dense (no structured sparsity) and count a fused multiply-add as two FLOPs, as vendors state them.
Units are named by number format and by where the arithmetic runs: the vector units (CUDA cores, a CPU's SIMD
lanes: ``fp32``) or the matrix units (tensor cores, XMX, AMX: ``fp16 matrix``).

Importing this module does not import torch.
"""

from __future__ import annotations

from dataclasses import dataclass, replace
from typing import Any

from .codec import record_from_json, to_json

VECTOR_UNITS = ("fp64", "fp32", "fp16", "bf16")
MATRIX_UNITS = ("fp64 matrix", "tf32 matrix", "fp16 matrix", "bf16 matrix", "fp8 matrix", "int8 matrix")
UNITS = VECTOR_UNITS + MATRIX_UNITS


@dataclass(frozen=True)
class Peak:
    """One peak figure.

    :param value: bytes/s for the memory bandwidth, FLOP/s for a compute unit.
    :param source: where it comes from, for people ("NVIDIA H100 SXM5 datasheet", "measured on this host: ...").
    :param measured: True when measured on the device (an achieved best, not a vendor's maximum).
    """

    value: float
    source: str
    measured: bool = False

    def __post_init__(self) -> None:
        if not self.value > 0:
            raise ValueError(f"Peak: value must be > 0, not {self.value!r}")
        if not self.source:
            raise ValueError("Peak: source is empty")


@dataclass(frozen=True)
class DevicePeaks:
    """What a device can do at most: memory bandwidth and FLOP/s per unit.

    :param device: the device the figures are for ("NVIDIA H100 80GB HBM3").
    :param bandwidth: peak memory bandwidth, bytes/s; None where neither the vendor nor a measurement gives one.
    :param compute: unit (:data:`UNITS`) -> peak FLOP/s, dense.
    :param cache_bytes: the last-level cache, which the physical floor allows a call's data to stay in (0: none).
    :param cache_bandwidths: for a device whose caches are not flushed between timed runs (the host CPU): each
        cache level's size with the bandwidth of copies that fit it, smallest first; a problem that fits a level
        may run from there.
    :param vector_units: what the vector units are called on this device ("CUDA cores").
    :param matrix_units: what the matrix units are called ("tensor cores").
    :param notes: how the figures were scaled or filled in ("scaled to 16 of 132 SMs").
    """

    device: str
    bandwidth: Peak | None
    compute: tuple[tuple[str, Peak], ...] = ()
    cache_bytes: int = 0
    cache_bandwidths: tuple[tuple[int, Peak], ...] = ()
    vector_units: str = "vector units"
    matrix_units: str = "matrix units"
    notes: tuple[str, ...] = ()

    def __post_init__(self) -> None:
        units = [unit for unit, _ in self.compute]
        unknown = [unit for unit in units if unit not in UNITS]
        if unknown:
            raise ValueError(f"DevicePeaks: unknown unit(s) {unknown}; use {', '.join(UNITS)}")
        if len(set(units)) != len(units):
            raise ValueError(f"DevicePeaks: a unit is given twice: {units}")
        if self.cache_bytes < 0:
            raise ValueError("DevicePeaks: cache_bytes must be >= 0")

    def rate(self, unit: str) -> Peak | None:
        """The peak of ``unit``, or None where the device has none stated or measured."""
        return dict(self.compute).get(unit)

    @property
    def units(self) -> tuple[str, ...]:
        return tuple(unit for unit, _ in self.compute)

    def missing(self, units: tuple[str, ...]) -> tuple[str, ...]:
        """Which of ``units`` (and ``"memory"`` for the bandwidth) these peaks lack."""
        lacking = () if self.bandwidth is not None else ("memory",)
        return lacking + tuple(unit for unit in units if self.rate(unit) is None)

    def filled_from(self, other: DevicePeaks) -> DevicePeaks:
        """These peaks, with what they lack taken from ``other`` (a measurement of the same device)."""
        compute = self.compute + tuple((unit, peak) for unit, peak in other.compute if self.rate(unit) is None)
        return replace(self, bandwidth=self.bandwidth or other.bandwidth, compute=_ordered(compute),
                       cache_bytes=self.cache_bytes or other.cache_bytes,
                       cache_bandwidths=self.cache_bandwidths or other.cache_bandwidths,
                       notes=self.notes + other.notes)

    def unit_words(self, unit: str) -> str:
        """``"fp16 on tensor cores"``, ``"fp32 on CUDA cores"``."""
        if unit.endswith(" matrix"):
            return f"{unit[:-len(' matrix')]} on {self.matrix_units}"
        return f"{unit} on {self.vector_units}"

    def describe(self) -> list[str]:
        """One line per figure, with its source."""
        lines = [f"memory bandwidth {bandwidth_text(self.bandwidth.value)} ({self.bandwidth.source})"
                 if self.bandwidth is not None else "memory bandwidth: unknown"]
        lines += [f"{self.unit_words(unit)}: {flops_text(peak.value)} ({peak.source})" for unit, peak in self.compute]
        if self.cache_bytes:
            lines.append(f"last-level cache {self.cache_bytes / 2**20:,.0f} MiB")
        lines += [f"copies within a {size / 2**20:,.4g} MiB cache level: {bandwidth_text(peak.value)} ({peak.source})"
                  for size, peak in self.cache_bandwidths]
        return lines + list(self.notes)

    def to_json(self) -> dict[str, Any]:
        return to_json(self)

    @classmethod
    def from_json(cls, data: dict[str, Any]) -> DevicePeaks:
        return record_from_json(cls, data)


def flops_text(value: float) -> str:
    """``"989.4 TFLOP/s"``, ``"87.7 GFLOP/s"``."""
    return f"{value / 1e12:,.1f} TFLOP/s" if value >= 1e12 else f"{value / 1e9:,.1f} GFLOP/s"


def bandwidth_text(value: float) -> str:
    """``"3.35 TB/s"``, ``"10.2 GB/s"``."""
    return f"{value / 1e12:,.2f} TB/s" if value >= 1e12 else f"{value / 1e9:,.1f} GB/s"


def _ordered(compute: tuple[tuple[str, Peak], ...]) -> tuple[tuple[str, Peak], ...]:
    return tuple(sorted(compute, key=lambda item: UNITS.index(item[0])))


def peaks_of(device: str, bandwidth: Peak | None, rates: dict[str, Peak], **fields: Any) -> DevicePeaks:
    """A :class:`DevicePeaks` with its units in the usual order."""
    return DevicePeaks(device, bandwidth, _ordered(tuple(rates.items())), **fields)
