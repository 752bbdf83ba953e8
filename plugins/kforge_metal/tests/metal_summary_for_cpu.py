"""A plugin for the replayed-run test: the backend ``cpu-metal-summary`` writes, compiles and profiles Numba
kernels exactly as ``cpu`` does (its stages are kforge_cpu's), but summarises every profile as the metal backend
summarises its own, from the fixture profile (a Metal System Trace written from the documentation and
measurements of the test's). So the metal summary's picture travels the real loop to the analyst on a machine
without a Mac."""

from __future__ import annotations

import dataclasses
import tempfile
from pathlib import Path

import kforge_cpu
from metal_profile_fixture import write_metal_profile

from kforge_core import hookimpl
from kforge_metal.summary import summarize_metal

BACKEND = dataclasses.replace(kforge_cpu.CPU_BACKEND, name="cpu-metal-summary",
                              description="cpu's stages, metal's profile summary (a test backend)")


@hookimpl
def kforge_register_backends(register):
    register(BACKEND)


kforge_backend_availability = kforge_cpu.kforge_backend_availability
kforge_lower = kforge_cpu.kforge_lower
kforge_compile = kforge_cpu.kforge_compile
kforge_profile = kforge_cpu.kforge_profile


@hookimpl
def kforge_summarize_profile(backend, problem, profile):
    return summarize_metal(write_metal_profile(Path(tempfile.mkdtemp(prefix="kforge-test-metal-profile-"))))
