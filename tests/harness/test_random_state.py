"""The device generator's repair, seen by the worker's integrity check: a candidate during which KForge had to
repair it (its graph capture failed and it went on) leaves its worker unclean, so the worker is not reused."""

from __future__ import annotations

import torch

from kforge_core.harness.worker import random_state
from kforge_core.harness.worker.integrity import ProcessSnapshot, changes_since


def test_the_host_cpus_generator_needs_no_repair():
    assert random_state.draws_on(torch.device("cpu")) is False


def test_a_repair_during_a_candidate_is_a_change_of_the_workers_state(monkeypatch):
    before = ProcessSnapshot.take()
    assert changes_since(before).state == []
    monkeypatch.setattr(random_state, "_repaired", [random_state.repairs() + 1])
    changed = changes_since(before).state
    assert len(changed) == 1 and changed[0].startswith("graph captures left unfinished")
