"""What the generation agent is told about the triton backend: Triton as a language (the core's shared text and
example), for the NVIDIA GPU read from this machine."""

from __future__ import annotations

from kforge_core.hookspecs import hookimpl
from kforge_core.languages import triton as triton_language
from kforge_core.records import Backend, Lowering, Problem
from kforge_nvidia.device_facts import device_arch, hardware_text


def lower(backend: Backend) -> Lowering:
    arch = device_arch() or "the device's architecture"
    return Lowering(backend=backend.name, programming_model=triton_language.programming_model(arch),
                    hardware=hardware_text(), example=triton_language.example(),
                    reply_format=triton_language.REPLY_FORMAT)


@hookimpl
def kforge_lower(backend: Backend, problem: Problem) -> Lowering:
    return lower(backend)
