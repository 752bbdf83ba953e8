"""A plugin for the end-to-end tests: the ``cpu_gui`` backend is the cpu backend (its own stages, from
``kforge_cpu``) with a profile summary that carries an image (a bar chart of the kernels' times), standing for a
backend whose profiler is a GUI tool."""

from __future__ import annotations

import dataclasses
import tempfile
from pathlib import Path

from kforge_core import hookimpl
from kforge_core.records import Image, ProfileSummary
from kforge_cpu import CPU_BACKEND
from kforge_cpu import availability, compile, lowering, profile, summarize

CPU_GUI = dataclasses.replace(CPU_BACKEND, name="cpu_gui", description="cpu, with a picture in every summary")


@hookimpl
def kforge_register_backends(register):
    register(CPU_GUI)


@hookimpl
def kforge_backend_availability(backend, options):
    return availability.kforge_backend_availability(backend, options)


@hookimpl
def kforge_lower(backend, problem, options, cache_dir):
    return lowering.kforge_lower(backend, problem, options, cache_dir)


@hookimpl
def kforge_compile(backend, candidate, context):
    return compile.kforge_compile(backend, candidate, context)


@hookimpl
def kforge_profile(backend, candidate, context):
    return profile.kforge_profile(backend, candidate, context)


@hookimpl
def kforge_summarize_profile(backend, problem, profile):
    summary = summarize.kforge_summarize_profile(backend, problem, profile)
    if summary is None:
        return None
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    kernels = [k for k in profile.kernels if k.duration_us is not None]
    fig, ax = plt.subplots(figsize=(3, 2), dpi=50)
    ax.barh([k.name[:16] for k in kernels] or ["forward"], [k.duration_us for k in kernels] or [0.0])
    path = Path(tempfile.mkdtemp(prefix="kforge-test-profile-")) / "kernels.png"
    fig.savefig(path)
    plt.close(fig)
    return ProfileSummary(text=summary.text, images=summary.images + (Image(path, caption="time per kernel"),))
