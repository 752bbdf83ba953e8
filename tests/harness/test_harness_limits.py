"""What a candidate may take from the machine: its scratch space (the sandbox's tmpfs mounts), its processes and
threads, what it adds to the build caches. A candidate that reaches a limit fails with ``resource_limit`` naming
it; its worker is replaced, what it left is removed, and the next candidate passes.

One harness per sandbox mode, with small limits, serves the module: each test ends with an honest candidate."""

from __future__ import annotations

import os

import pytest

from kforge_core.harness import Harness
from kforge_core.harness.host.cgroups import cgroup_support
from kforge_core.harness.host.limits import process_limit_probe
from kforge_core.harness.host.namespaces import sandbox_status
from kforge_core.records import Failure

from .helpers import SELECTION, TORCH_CPU, candidate, problem, settings_for

needs_sandbox = pytest.mark.skipif(not sandbox_status().available, reason="no namespace sandbox on this machine")
FEW_PROCESSES = 300  # the least a PID namespace's pid_max can hold (301): the bombs stop at 1000 by themselves
SCRATCH_MB = 64  # the worker's tmpfs mounts in all: /tmp gets half
QUOTA_MB = 32


@pytest.fixture(scope="module")
def harnesses(cache_dir):
    made: dict[str, Harness] = {}

    def get(sandbox: str) -> Harness:
        if sandbox not in made:
            settings = settings_for(cache_dir, spare_workers=0, baselines=(), sandbox=sandbox,
                                    scratch_limit_mb=SCRATCH_MB, max_processes=FEW_PROCESSES, cache_quota_mb=QUOTA_MB)
            made[sandbox] = Harness(backend=TORCH_CPU, problem=problem("relu_scale"), settings=settings,
                                    plugins=SELECTION)
        return made[sandbox]

    yield get
    for harness in made.values():
        harness.close()


def _process_limit_applies(sandbox: str) -> bool:
    """Whether something here bounds a worker's processes (docs/trust.md): pid_max of the sandbox's PID namespace,
    RLIMIT_NPROC for a user who is not root, a cgroup's pids.max."""
    if sandbox != "off" and sandbox_status().available and process_limit_probe().pid_max:
        return True
    return os.geteuid() != 0 or "pids" in cgroup_support().controllers


def _next_passes(harness: Harness) -> None:
    verdict = harness.evaluate(candidate("relu_scale_numpy"))
    assert verdict.correct, verdict.message


@needs_sandbox
@pytest.mark.parametrize("name", ["fill_tmp", "fill_tmp_quietly"])
def test_a_candidate_that_fills_its_scratch_tmpfs_reaches_a_named_limit(harnesses, name):
    """/tmp is a tmpfs of the worker's sandbox, 32 MiB of its 64 (harness.scratch_limit_mb); the candidate writes
    128 MiB. Whether the write's error ends its call or it carries on, it fails naming the limit, and its worker is
    replaced: the tmpfs, and the host memory it held, go with the worker's namespaces."""
    harness = harnesses("required")
    verdict = harness.evaluate(candidate(name))
    assert verdict.failure is Failure.RESOURCE_LIMIT, verdict.message
    assert "scratch space /tmp is full: a tmpfs of 32 MiB, its share of harness.scratch_limit_mb" in verdict.message
    assert verdict.worker_replaced
    _next_passes(harness)


@pytest.mark.parametrize("sandbox", [pytest.param("required", marks=needs_sandbox), "off"])
def test_what_a_candidate_leaves_in_the_build_caches_is_removed_and_bounded(harnesses, cache_dir, sandbox):
    """A candidate leaves junk in the build cache beside a library where torch's extensions keep theirs: 8 MiB,
    within the quota, and it passes, the junk removed and the library kept; 64 MiB, past the quota of 32, and it
    fails naming harness.cache_quota_mb, all it added removed."""
    harness = harnesses(sandbox)
    extensions = cache_dir / "torch_extensions"
    library = extensions / "kforge_limits_test_ext" / "kforge_limits_test_ext.so"
    verdict = harness.evaluate(candidate("cache_junk_small"))
    assert verdict.correct, verdict.message
    assert not (extensions / "junk-left-by-a-candidate-small.bin").exists() and library.is_file()
    assert any("removed 1 file(s) (8.0 MiB)" in note for note in verdict.verify.notes)

    library.unlink()
    library.parent.rmdir()
    verdict = harness.evaluate(candidate("cache_junk"))
    assert verdict.failure is Failure.RESOURCE_LIMIT, verdict.message
    assert f"added 64.0 MiB to the build caches, past its quota of {QUOTA_MB} MiB (harness.cache_quota_mb)" \
        in verdict.message
    assert not (extensions / "junk-left-by-a-candidate.bin").exists() and not library.parent.exists()
    assert verdict.worker_replaced
    _next_passes(harness)


@pytest.mark.parametrize("name, sandbox", [
    pytest.param("fork_bomb", "required", marks=needs_sandbox),
    ("thread_bomb", "off"),
])
def test_a_fork_or_thread_bomb_reaches_the_process_limit(harnesses, name, sandbox):
    """harness.max_processes bounds a worker's processes and threads from before any candidate code runs."""
    if not _process_limit_applies(sandbox):
        pytest.skip("nothing bounds a worker's processes here (root, no pid_max of its own, no pids cgroup)")
    harness = harnesses(sandbox)
    verdict = harness.evaluate(candidate(name))
    assert verdict.failure is Failure.RESOURCE_LIMIT, verdict.message
    assert f"limit on processes and threads (harness.max_processes = {FEW_PROCESSES})" in verdict.message
    assert verdict.worker_replaced
    _next_passes(harness)


@pytest.mark.skipif("memory" not in cgroup_support().controllers, reason=f"no memory cgroup here: {cgroup_support().why}")
def test_a_candidate_past_its_cgroups_memory_limit_is_out_of_memory_naming_it(cache_dir):
    """The worker's cgroup holds it to harness.memory_limit_mb (1 GiB); the candidate takes 2 GiB. The backend is
    the CPU taken for an accelerator, whose address space is not limited: only the cgroup stops it. Its memory
    bandwidth is not stated: each worker measures it as it starts, with copies that keep within the limit."""
    from .torch_backend_plugin import TORCH_CPU_UNLISTED

    settings = settings_for(cache_dir, spare_workers=0, baselines=(), memory_limit_mb=1024)
    with Harness(backend=TORCH_CPU_UNLISTED, problem=problem("relu_scale"), settings=settings,
                 plugins=SELECTION) as harness:
        verdict = harness.evaluate(candidate("grab_memory"))
        assert verdict.failure is Failure.OUT_OF_MEMORY, verdict.message
        assert "out-of-memory killer ended a process at its cgroup's memory" in verdict.message
        assert "(1024 MiB)" in verdict.message and verdict.worker_replaced
        _next_passes(harness)


def test_a_candidate_out_of_the_devices_memory_beside_kforges_processes_is_evaluated_again_alone(cache_dir):
    """Out of the device's memory (its runtime's words) while the referee, the baseline worker and a spare held
    theirs: a verdict KForge lost, not the candidate's failure. The candidate is evaluated again with the device
    to itself, and the problem stays so; a candidate out of memory then is out of memory, evaluated once."""
    from .torch_backend_plugin import TORCH_CPU_ACCELERATOR

    settings = settings_for(cache_dir, spare_workers=1, baselines=("eager",))
    with Harness(backend=TORCH_CPU_ACCELERATOR, problem=problem("relu_scale"), settings=settings,
                 plugins=SELECTION) as harness:
        verdict = harness.evaluate(candidate("out_of_memory_beside_others"))
        assert verdict.correct, verdict.message
        assert "out of memory beside KForge's other processes" in verdict.device_alone
        assert "accelerator memory exhausted" in verdict.device_alone
        assert verdict.speedup("eager") is not None  # its baseline measured again beside it
        # an accelerator's timed blocks, the candidate's and the baselines', on one host CPU (cpu_placement)
        assert "every timed block, the baselines' too, on host CPU" in verdict.method.notes
        started = harness.workers_started
        verdict = harness.evaluate(candidate("out_of_device_memory"))
        assert verdict.failure is Failure.OUT_OF_MEMORY and not verdict.device_alone, verdict.message
        assert harness.workers_started - started <= 2  # its worker and the one after it; no second evaluation
