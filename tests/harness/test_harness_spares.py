"""A spare worker prepared ahead for the next problem: moving on costs no wait for its reference."""

from __future__ import annotations

import pytest

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


def test_the_next_problems_baselines_are_built_while_the_current_one_is_evaluated(cache_dir):
    from .torch_backend_plugin import TORCH_CPU_ACCELERATOR

    first, second = problem("relu_scale"), problem("tiny_output")
    settings = settings_for(cache_dir, spare_workers=0, baselines=("eager",), repetitions=4, baseline_cache="off")
    with Harness(backend=TORCH_CPU_ACCELERATOR, problem=first, settings=settings, plugins=SELECTION) as harness:
        harness.expect_problem(second)
        ahead = harness._baselines.ahead
        assert ahead.prepared_for == second.digest  # started, and told to prepare the next problem and build
        assert harness.evaluate(candidate("relu_scale_numpy")).speedup("eager") is not None
        harness.use_problem(second)
        assert harness._baselines.worker is ahead  # the worker that got ready ahead times the second problem's
        verdict = harness.evaluate(candidate("tiny_output_numpy"))
        assert verdict.correct, verdict.message
        assert verdict.speedup("eager") is not None and harness._baselines.worker is ahead
        assert ahead.prepared_for == second.digest


def test_on_the_host_cpu_no_baselines_are_built_beside_a_timed_run(cache_dir):
    first, second = problem("relu_scale"), problem("tiny_output")
    with Harness(backend=TORCH_CPU, problem=first, settings=settings_for(cache_dir, spare_workers=0),
                 plugins=SELECTION) as harness:
        harness.expect_problem(second)
        assert harness._baselines.ahead.prepared_for == ""


def _state(pid: int, *, waiting: bool = True) -> str:
    """The process's state letter ("T": stopped). ``waiting``: for a stop to take effect, which it does once the
    process is next scheduled (on a busy machine, not at once)."""
    import time
    from pathlib import Path

    for _ in range(100 if waiting else 1):
        now = Path(f"/proc/{pid}/stat").read_text().split()[2]
        if now == "T":
            break
        time.sleep(0.05)
    return now


@pytest.mark.slow
def test_a_spare_still_starting_is_paused_while_a_candidate_is_timed_and_goes_on_after(cache_dir):
    # it neither competes with the timed runs for the machine nor makes them wait until it has started
    import contextlib

    settings = settings_for(cache_dir, spare_workers=1, baselines=())
    with Harness(backend=TORCH_CPU, problem=problem("relu_scale"), settings=settings, plugins=SELECTION) as harness:
        pool = harness._pool
        slow = problem("slow_init")
        harness.expect_problem(slow)  # the spare started from now on prepares it: 4 s
        states: list[tuple[bool, str]] = []
        starts_paused = pool.starts_paused

        @contextlib.contextmanager
        def watched():
            with starts_paused():
                states.extend((bool(w.pending), _state(w.process.pid)) for w in pool._idle)
                yield

        pool.starts_paused = watched
        verdict = harness.evaluate(candidate("relu_scale_numpy"))
        assert verdict.correct and verdict.runtime is not None, verdict.message
        assert (True, "T") in states, states  # the spare, still starting, stopped during timing
        spare = next(w for w in pool._idle if w.pending)
        pool._ready(spare)  # and it went on: started and prepared once timing was over
        assert pool._prepared[spare.pid] == slow.digest


def _timed_beside_the_next(cache_dir, next_name: str, look):  # noqa: ANN001, ANN202
    """A candidate of ``relu_scale`` evaluated on an accelerator-like device while the second baseline worker gets
    ready for ``next_name``: what ``look(ahead)`` saw inside the quiet for timing, the verdict, the worker getting
    ready (waited for once the evaluation is over)."""
    import contextlib

    from .torch_backend_plugin import TORCH_CPU_ACCELERATOR

    settings = settings_for(cache_dir, spare_workers=0, baselines=("eager",), repetitions=4, baseline_cache="off")
    with Harness(backend=TORCH_CPU_ACCELERATOR, problem=problem("relu_scale"), settings=settings,
                 plugins=SELECTION) as harness:
        upcoming = problem(next_name)
        harness.expect_problem(upcoming)
        window = harness._baselines
        ahead, quiet, seen = window.ahead, window.quiet, []

        @contextlib.contextmanager
        def watched():
            with quiet():
                seen.append(look(ahead))
                yield

        window.quiet = watched
        verdict = harness.evaluate(candidate("relu_scale_numpy"))
        assert verdict.correct and verdict.speedup("eager") is not None, verdict.message
        stopped_after = _state(ahead._worker.pid, waiting=False) == "T"
        ahead.wait_ready(60)
        assert ahead.failed == "" and ahead.prepared_for == upcoming.digest and ahead._worker.pending == 0
        assert not stopped_after  # it went on after the timed runs
        return seen, verdict


@pytest.mark.slow
def test_the_next_problems_baseline_worker_has_started_and_prepared_before_a_candidate_is_timed(cache_dir):
    # the preparation (slow_init's 4 s) makes that problem's inputs on the device, whose kernels would share it
    # with the timed calls
    seen, verdict = _timed_beside_the_next(cache_dir, "slow_init", lambda ahead: True in ahead._unanswered)
    assert seen == [False], seen  # its start and the preparation answered before the timed runs began
    assert dict(verdict.phases)["quiet"] > 1.0, verdict.phases  # the preparation, waited for


@pytest.mark.slow
def test_the_next_problems_baseline_build_is_stopped_while_a_candidate_is_timed_and_goes_on_after(cache_dir):
    # its build, the model's 6 s constructor here, is stopped as a builder's is, rather than waited for
    seen, verdict = _timed_beside_the_next(
        cache_dir, "slow_model", lambda ahead: (ahead._worker.pending, _state(ahead._worker.pid)))
    assert seen == [(1, "T")], seen  # started and prepared, its build still to answer, and stopped
    assert dict(verdict.phases)["quiet"] < 3.0, verdict.phases  # not the 6 s build


def test_a_worker_told_to_close_exits_at_once_whatever_was_left_to_run_at_exit(cache_dir):
    # the interpreter's exit ran Inductor's compile-pool shutdown in a bench's baseline worker: the close waited its
    # 5 s for it and then killed it, every bench
    settings = settings_for(cache_dir, spare_workers=0, baselines=())
    with Harness(backend=TORCH_CPU, problem=problem("relu_scale"), settings=settings, plugins=SELECTION) as harness:
        verdict = harness.evaluate(candidate("exit_sleeper"), measure=False)
        assert verdict.correct and not verdict.worker_replaced, verdict.message
        (worker,) = harness._pool._idle
        worker.close()
        assert worker.process.returncode == 0  # it ended by itself (a worker killed after the wait ends with -9)
