"""The record of where an evaluation's seconds go: phases in the order they began, repeated ones summed."""

from __future__ import annotations

import time

import pytest

from kforge_core.harness.host.phases import Phases


def test_phases_keep_their_order_and_a_repeated_phase_is_summed():
    phases = Phases()
    with phases.phase("compile"):
        time.sleep(0.02)
    with phases.phase("verify"):
        pass
    with phases.phase("compile"):
        time.sleep(0.02)
    recorded = phases.record()
    assert [name for name, _ in recorded] == ["compile", "verify"]
    assert dict(recorded)["compile"] >= 0.04 and dict(recorded)["verify"] < 0.02


def test_a_phase_that_raises_is_still_counted():
    phases = Phases()
    with pytest.raises(RuntimeError), phases.phase("timing"):
        time.sleep(0.01)
        raise RuntimeError("the worker died")
    assert dict(phases.record())["timing"] >= 0.01
