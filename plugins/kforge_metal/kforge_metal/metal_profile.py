"""The measurements the profile stage makes on the GPU, as one typed record written next to the profiler's files
(``metal_profile.json``): the summary and the picture are made from it in KForge's process."""

from __future__ import annotations

import json
from dataclasses import dataclass
from pathlib import Path

from kforge_core.plugin_api import record_from_json, to_json
from kforge_core.records import KernelMetrics, ProfileResult

from .metal_trace import TraceSummary

PROFILE_FILE = "metal_profile.json"
FORWARD = "ModelNew.forward"


@dataclass(frozen=True)
class KernelTime:
    """One kernel compiled with ``compile_shader``, timed dispatch by dispatch during probe forwards.

    :param calls_per_forward: dispatches of it in one forward.
    :param us_per_call: median GPU time of one dispatch (``torch.mps.Event`` around it, the queue drained
        before), microseconds.
    :param bytes_per_call: bytes of the tensors passed to it: what it reads and writes at most once each.
    :param threads: the grid of its last dispatch; ``group_size`` its threadgroup.
    """

    name: str
    calls_per_forward: float
    us_per_call: float
    bytes_per_call: int
    threads: tuple[int, ...] = ()
    group_size: tuple[int, ...] = ()

    @property
    def gbs(self) -> float:
        return self.bytes_per_call / self.us_per_call / 1e3 if self.us_per_call > 0 else 0.0


@dataclass(frozen=True)
class MetalProfile:
    """What the profile stage measured.

    :param device: the chip and GPU cores ("Apple M3 Max, 40-core GPU").
    :param forward_ms: ``ModelNew.forward`` times, one per timed forward (``torch.mps.Event``), milliseconds.
    :param copy_gbs: the bandwidth a device-to-device copy of 256 MiB reached here just before: the practical
        ceiling of a memory-bound kernel on this GPU.
    :param minimum_bytes: bytes the problem must move (``kforge_core.workload.floor_bytes``).
    :param kernels: the candidate's own kernels.
    :param trace: the Metal System Trace's summary, when one was recorded.
    :param trace_note: why there is no trace, when there is none.
    :param picture: whether the summary draws the profile for the analyst (``[backends.metal] profile_image``).
    """

    device: str
    forward_ms: tuple[float, ...]
    copy_gbs: float
    minimum_bytes: int
    kernels: tuple[KernelTime, ...] = ()
    trace: TraceSummary | None = None
    trace_note: str = ""
    picture: bool = True

    @property
    def median_forward_ms(self) -> float:
        ordered = sorted(self.forward_ms)
        return ordered[len(ordered) // 2] if ordered else 0.0

    def write(self, directory: Path) -> Path:
        path = directory / PROFILE_FILE
        path.write_text(json.dumps(to_json(self)))
        return path

    @classmethod
    def read(cls, path: Path) -> MetalProfile:
        return record_from_json(cls, json.loads(path.read_text()))

    @classmethod
    def of(cls, profile: ProfileResult) -> MetalProfile | None:
        """The record a ``metal`` profile carries among its files, or None."""
        path = profile_path(profile)
        return cls.read(path) if path is not None else None

    def kernel_metrics(self) -> tuple[KernelMetrics, ...]:
        """The forward and each kernel as the records every profile carries."""
        forward = KernelMetrics(FORWARD, self.median_forward_ms * 1e3, (("forwards", float(len(self.forward_ms))),))
        kernels = tuple(KernelMetrics(k.name, k.us_per_call, (
            ("calls_per_forward", k.calls_per_forward), ("us_per_forward", k.us_per_call * k.calls_per_forward),
            ("bytes_per_call", float(k.bytes_per_call)), ("gbs", k.gbs))) for k in self.kernels)
        return (forward, *kernels)


def profile_path(profile: ProfileResult) -> Path | None:
    """Where the profile stage wrote its :class:`MetalProfile`, when the file is there."""
    path = next((Path(f) for f in profile.files if Path(f).name == PROFILE_FILE), None)
    return path if path is not None and path.is_file() else None
