"""Whether the triton backend can run here, and if not, why: Triton and an NVIDIA GPU. An answer, never an
exception."""

from __future__ import annotations

from typing import Any

from kforge_core.hookspecs import hookimpl
from kforge_core.languages import triton as triton_language
from kforge_core.records import Availability, Backend
from kforge_nvidia.availability import device_detail, device_problem


def triton_availability() -> Availability:
    version = triton_language.installed_version()
    if version is None:
        return Availability.no("triton not installed (pip install triton)")
    problem = device_problem()
    if problem:
        return Availability.no(problem)
    return Availability.yes(f"{device_detail()}, triton {version}")


@hookimpl
def kforge_backend_availability(backend: Backend, options: Any) -> Availability:
    return triton_availability()
