"""A spare worker prepared ahead for the next problem: moving on costs no wait for its reference."""

from __future__ import annotations

from kforge_core.harness import Harness

from .helpers import SELECTION, TORCH_CPU, candidate, problem, settings_for


def test_a_spare_prepares_for_the_next_problem_while_the_current_one_is_evaluated(cache_dir):
    first, second = problem("relu_scale"), problem("tiny_output")
    with Harness(backend=TORCH_CPU, problem=first, settings=settings_for(cache_dir, spare_workers=1, baselines=()),
                 plugins=SELECTION) as harness:
        pool = harness._pool
        harness.expect_problem(second)
        assert harness.evaluate(candidate("relu_scale_numpy"), measure=False).correct
        # the warm worker (and the referee) for this problem, the spare for the next
        prepared = list(pool._prepared.values())
        assert set(prepared) == {first.digest, second.digest} and prepared.count(second.digest) == 1
        assert pool.reference_s is not None  # this problem's reference time, not the next one's
        harness.use_problem(second)
        spare = pool._take_idle()
        assert pool._prepared[spare.pid] == second.digest  # the one acquire takes: nothing left to prepare
        pool._idle.append(spare)
        started = harness.workers_started
        verdict = harness.evaluate(candidate("relu_scale_numpy"), measure=False)  # (for another problem: no matter)
        assert verdict.failure is None or verdict.failure.value != "harness_error", verdict.message
        assert harness.workers_started == started  # served by the spare prepared ahead, no process started
        assert pool.reference_s is not None  # the second problem's reference time, read from that spare
