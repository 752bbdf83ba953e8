"""A metal profile as the profile stage would write it, made from the xctrace fixtures and measurements of the
kind the stage takes (the numbers are the test's, not a Mac's)."""

from __future__ import annotations

from pathlib import Path

from metal_testing import FIXTURES

from kforge_core.records import ProfileResult
from kforge_metal.dispatch_probe import Dispatch, kernel_times
from kforge_metal.metal_profile import MetalProfile
from kforge_metal.metal_trace import summarize_trace
from kforge_metal.xctrace_xml import parse_table

MiB = 1 << 20


def fixture_trace():
    return summarize_trace(parse_table((FIXTURES / "xctrace_metal_gpu_intervals.xml").read_text()), 4242,
                           parse_table((FIXTURES / "xctrace_signpost_intervals.xml").read_text()))


def fixture_kernels():
    dispatches = [Dispatch("rmsnorm", us, 32 * MiB, (1048576,), (256,)) for us in (180.0, 185.0)]
    dispatches += [Dispatch("scale", 30.0, 4 * MiB, (4096,), (256,))] * 4  # two per forward
    return kernel_times(dispatches, forwards=2)


def write_metal_profile(directory: Path, *, picture: bool = True, trace: bool = True) -> ProfileResult:
    measured = MetalProfile(
        device="Apple M3 Max, 40-core GPU", forward_ms=(0.50, 0.49, 0.51, 0.50, 0.52), copy_gbs=350.0,
        minimum_bytes=128 * MiB, kernels=fixture_kernels(), trace=fixture_trace() if trace else None,
        trace_note="" if trace else "no Metal System Trace: xctrace not found", picture=picture,
    )
    path = measured.write(directory)
    return ProfileResult(tool="metal", kernels=measured.kernel_metrics(), files=(path,),
                         ops=("aten::empty_like", "aten::mul"))
