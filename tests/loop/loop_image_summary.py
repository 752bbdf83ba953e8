"""A plugin for the end-to-end tests: it wraps the profile summary of the cpu backend and adds an image (a bar
chart of the kernels' times), standing for a backend whose profiler is a GUI tool (the summary carries images)."""

from __future__ import annotations

import tempfile
from pathlib import Path

from kforge_core import hookimpl
from kforge_core.records import Image, ProfileSummary


@hookimpl(wrapper=True)
def kforge_summarize_profile(backend, problem, profile):
    summary = yield
    if backend.name != "cpu" or summary is None:
        return summary
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
