"""The candidate's worker and the baseline worker time in processes prepared alike: whatever a timed call runs under
(threads, the CPUs it may run on, hooks that see every operator, autograd and precision switches, the variables
the runtime reads) is the same on both sides, so that code the same on both comes out at 1.00x. The problem's
forward writes its process's state down at every call of a timed block (``problems/process_state_probe.py``);
the reference is its own candidate. A safety hook left on in the candidate's worker through its timed runs (the
operator trace of verification, a profiler) shows here as a difference, with no figure timed."""

from __future__ import annotations

import json

from kforge_core.harness import Harness
from kforge_core.records import Candidate

from .helpers import SELECTION, TORCH_CPU, problem, settings_for


def test_a_timed_call_runs_under_the_same_process_state_in_the_candidates_worker_and_the_baselines(
        tmp_path, monkeypatch):
    log = tmp_path / "state.jsonl"
    monkeypatch.setenv("PROCESS_STATE_LOG", str(log))  # the workers inherit it
    probe = problem("process_state_probe")
    # no sandbox: a sandboxed worker could not write to this test's directory; the reference calls PyTorch
    settings = settings_for(tmp_path / "cache", sandbox="off", cheat_policy="report", spare_workers=0)
    with Harness(backend=TORCH_CPU, problem=probe, settings=settings, plugins=SELECTION) as harness:
        verdict = harness.evaluate(Candidate.from_path(probe.path))
    assert verdict.correct and verdict.runtime is not None, verdict.message

    by_process: dict[int, list[dict]] = {}
    for line in log.read_text().splitlines():
        state = json.loads(line)
        by_process.setdefault(state.pop("pid"), []).append(state)
    assert len(by_process) == 2, sorted(by_process)  # the candidate's worker and the baseline worker, no other
    candidate_side, baseline_side = ({json.dumps(s, sort_keys=True) for s in states} for states in by_process.values())
    assert len(candidate_side) == 1 and candidate_side == baseline_side  # one state, the same on both sides
    state = json.loads(candidate_side.pop())
    assert not (state["trace"] or state["profile"] or state["profiler"] or state["function_modes"]
                or state["dispatch_modes"] or state["grad"]), state
