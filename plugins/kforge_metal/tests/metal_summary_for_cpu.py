"""A plugin for the replayed-run test: profiles of the cpu backend are summarised as the metal backend would
summarise its own, from the fixture profile (a Metal System Trace written from the documentation and measurements
of the test's), so that the metal summary's picture travels the real loop to the analyst on a machine without a
Mac."""

from __future__ import annotations

import tempfile
from pathlib import Path

from metal_profile_fixture import write_metal_profile

from kforge_core import hookimpl
from kforge_metal.summary import summarize_metal


@hookimpl(wrapper=True)
def kforge_summarize_profile(backend, problem, profile):
    summary = yield
    if backend.name != "cpu":
        return summary
    return summarize_metal(write_metal_profile(Path(tempfile.mkdtemp(prefix="kforge-test-metal-profile-"))))
