"""Nsight Compute profiles on one machine take turns (no GPU needed: the lock alone)."""

from __future__ import annotations

import threading
import time

import pytest

from kforge_nvidia.ncu import NcuError
from kforge_nvidia.profiler_turns import profiler_turn


def test_a_second_profile_waits_for_the_first_and_one_held_too_long_is_an_ncu_error(tmp_path):
    held, order = threading.Event(), []

    def first() -> None:
        with profiler_turn(tmp_path, timeout_s=5):
            held.set()
            time.sleep(0.6)
            order.append("first ends")

    thread = threading.Thread(target=first)
    thread.start()
    held.wait(5)
    with pytest.raises(NcuError, match="held this machine's profiler"):
        with profiler_turn(tmp_path, timeout_s=0.1):
            order.append("too early")
    with profiler_turn(tmp_path, timeout_s=5):
        order.append("second")
    thread.join()
    assert order == ["first ends", "second"]


def test_ncu_runs_while_holding_the_machines_profiler(tmp_path, monkeypatch):
    from kforge_nvidia import profile_stage

    seen = []

    def run_ncu(ncu, program, scratch, timeout_s, cwd):  # noqa: ANN001, ANN202 - stands in for ncu itself
        with pytest.raises(NcuError):  # the turn is taken: nobody else gets it now
            with profiler_turn(tmp_path / "cache", timeout_s=0.05):
                pass
        seen.append(program)
        raise NcuError("no GPU here")

    monkeypatch.setattr(profile_stage, "run_ncu", run_ncu)
    assert profile_stage.ncu_profile("ncu", ["child"], tmp_path, 5, "candidate", tmp_path / "cache") is None
    assert seen == [["child"]]
