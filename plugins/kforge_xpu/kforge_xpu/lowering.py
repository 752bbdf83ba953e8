"""What the generation agent is told about the ``xpu`` backend: Triton as a language (the core's shared text, for
the Intel GPU), then what differs on Xe with the device's limits read from ``torch.xpu`` at run time, the device's
facts, the single-shot example and the reply format."""

from __future__ import annotations

from importlib import resources
from string import Template
from typing import Any

from kforge_core.hookspecs import hookimpl
from kforge_core.languages import triton as triton_language
from kforge_core.records import Backend, Example, Lowering, Problem

from .backend import XPU
from .device_facts import XpuFacts, device_facts_here
from .grf_option import grf_option, intel_compiler_source

EXAMPLE_NOTE = ("A GEMM with its epilogue fused: tensor descriptors feed tl.dot (2D block loads; XMX for 16-bit "
                "inputs), programs grouped along M for cache reuse, bias, sigmoid, scale and residual applied to the fp32 "
                "accumulator before the single store. Xe launch options (grf_mode) are passed only on xpu.")


def _package_text(*parts: str) -> str:
    return resources.files("kforge_xpu").joinpath(*parts).read_text()


def example() -> Example:
    return Example(problem=_package_text("example", "gemm_epilogue.py"),
                   solution=_package_text("example", "gemm_epilogue_triton.py"), note=EXAMPLE_NOTE)


def xe_model(facts: XpuFacts | None, compiler_source: str | None) -> str:
    """What differs on Xe, with the device's limits where a device is known."""
    if facts is None:
        values = {"max_work_group_size": "the device's maximum work-group size (1024 on current Intel GPUs)",
                  "max_sub_groups": "its maximum sub-groups per work-group",
                  "slm_kib": "the device's", "cache_text": "its size is the device's",
                  "tf32_note": " (tf32 only on devices with tf32 DPAS, such as Data Center GPU Max)"}
    else:
        values = {"max_work_group_size": str(facts.max_work_group_size), "max_sub_groups": str(facts.max_sub_groups),
                  "slm_kib": str(facts.slm_bytes // 1024),
                  "cache_text": f"{facts.cache_bytes / 2**20:.0f} MiB" if facts.cache_bytes else "size unknown here",
                  "tf32_note": ", and tf32 on this device" if facts.has_dpas_tf32 else "; this device has no tf32 DPAS"}
    values["grf_option"] = f"`{grf_option(compiler_source)}`"
    return Template(_package_text("programming_model.md")).substitute(values)


def programming_model(facts: XpuFacts | None, compiler_source: str | None) -> str:
    target = facts.name if facts is not None else "the Intel GPU"
    return triton_language.programming_model(target) + "\n\n" + xe_model(facts, compiler_source)


def hardware_text(facts: XpuFacts | None) -> str:
    if facts is None:
        return ("No Intel GPU is visible here, so the target's facts are unknown; write for an Intel Arc B-series or "
                "Data Center GPU Max.")
    return facts.describe()


def lower(problem: Problem, facts: XpuFacts | None, compiler_source: str | None) -> Lowering:
    return Lowering(backend=XPU.name, programming_model=programming_model(facts, compiler_source),
                    hardware=hardware_text(facts), example=example(), reply_format=triton_language.REPLY_FORMAT)


@hookimpl
def kforge_lower(backend: Backend, problem: Problem, options: Any) -> Lowering | None:
    return lower(problem, device_facts_here(), intel_compiler_source())
