"""The limits' parts on their own: the tmpfs shares, the cache watch (links never followed), where cgroups are
made, a real worker cgroup's limits, the worker's naming of a limit its exception met, the settings."""

from __future__ import annotations

import errno
import os
import subprocess
import sys
from pathlib import Path

import pytest

from kforge_core.harness.host.cache_quota import cache_watch
from kforge_core.harness.host.cgroups import LEAF, LimitCounts, WorkerCgroup, _version_2, cgroup_support
from kforge_core.harness.host.exits import classify_exit
from kforge_core.harness.host.limits import SCRATCH_FLOOR, scratch_bytes
from kforge_core.harness.sandbox_plan import SandboxPlan
from kforge_core.harness.worker import limit_hits
from kforge_core.harness.worker.faults import classify_exception
from kforge_core.records import Failure
from kforge_core.settings import HarnessSettings

MIB = 1 << 20

# ------------------------------------------------------------------------------------------------ scratch space


def test_the_tmpfs_mounts_share_the_scratch_limit_and_the_temporary_directory_gets_most():
    plan = SandboxPlan(hide=("/home/user", "/runs", "/tmp"), writable=(), readable=(), tmpfs_bytes=64 * MIB)
    sizes = plan.tmpfs_sizes()
    assert set(sizes) == {"/home/user", "/runs", "/tmp", "/dev/shm"}
    assert sum(sizes.values()) <= 64 * MIB and sizes["/tmp"] == 32 * MIB and sizes["/dev/shm"] == 16 * MIB
    assert SandboxPlan(hide=("/tmp",), writable=(), readable=()).tmpfs_sizes() == {}  # no limit: 4 GiB each


def test_the_scratch_space_follows_the_problem_between_a_floor_and_the_setting(monkeypatch):
    from kforge_core.harness import problem_size

    sizes = {"small": 4096, "middle": 300 * MIB, "large": 4 << 30}  # one call's inputs and outputs
    monkeypatch.setattr(problem_size, "call_bytes", sizes.get)
    assert scratch_bytes(HarnessSettings(), "small") == SCRATCH_FLOOR == 1024 * MIB  # Inductor's header fits
    assert scratch_bytes(HarnessSettings(scratch_limit_mb=4096), "middle") == 1200 * MIB
    assert scratch_bytes(HarnessSettings(scratch_limit_mb=4096), "large") == 4096 * MIB
    assert scratch_bytes(HarnessSettings(scratch_limit_mb=64), "small") == 64 * MIB  # the setting caps the floor
    assert scratch_bytes(HarnessSettings(), None) == 1024 * MIB  # a worker started before its problem is known


def test_the_limit_settings_are_checked():
    for wrong in ({"max_processes": 10}, {"scratch_limit_mb": 1}, {"cache_quota_mb": 0}, {"cgroups": "on"}):
        with pytest.raises(ValueError):
            HarnessSettings(**wrong)


# ------------------------------------------------------------------------------------------------ build caches


def _write(path: Path, size: int) -> Path:
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_bytes(b"\0" * size)
    return path


def test_the_cache_watch_keeps_builds_and_removes_what_no_tool_wrote(tmp_path):
    cache = tmp_path / "cache"
    old_junk = _write(cache / "left-by-the-user.bin", 10)  # there before: never the candidate's
    watch = cache_watch(cache, {}, quota_mb=1)
    before = watch.snapshot()
    build = _write(cache / "torch_extensions" / "py311_cpu" / "ext" / "ext.so", 1000)
    inductor = _write(cache / "inductor" / "ab" / "cabc.py", 100)
    junk = _write(cache / "junk" / "deep" / "data.bin", 2000)
    disguised_top = _write(cache / "torch_extensions" / "data.so", 10)  # not where the tool puts its libraries
    added = watch.added_since(before)
    assert added.bytes == 3110 and added.junk_bytes == 2010 and not watch.over_quota(added)
    removed = watch.remove(added, everything=False)
    assert removed.files == 2 and removed.bytes == 2010
    assert build.exists() and inductor.exists() and old_junk.exists()
    assert not junk.exists() and not (cache / "junk").exists() and not disguised_top.exists()


def test_past_the_quota_everything_the_candidate_added_goes(tmp_path):
    cache = tmp_path / "cache"
    watch = cache_watch(cache, {}, quota_mb=1)
    earlier = _write(cache / "triton" / "h1" / "kernel.cubin", 10)
    before = watch.snapshot()
    build = _write(cache / "triton" / "h2" / "kernel.cubin", 2 * MIB)
    added = watch.added_since(before)
    assert "past its quota of 1 MiB (harness.cache_quota_mb)" in watch.over_quota(added)
    watch.remove(added, everything=True)
    assert not build.exists() and not build.parent.exists() and earlier.exists()


def test_the_cache_watch_never_follows_a_link(tmp_path):
    """A link the candidate puts in the cache, to a directory or a file elsewhere, is measured and removed as a
    link: what it points to is neither counted nor touched, and nothing is walked through it."""
    cache, elsewhere = tmp_path / "cache", tmp_path / "elsewhere"
    precious = _write(elsewhere / "precious.bin", 5 * MIB)
    watch = cache_watch(cache, {}, quota_mb=1)
    cache.mkdir(parents=True, exist_ok=True)
    before = watch.snapshot()
    (cache / "torch_extensions").mkdir()
    (cache / "torch_extensions" / "link-to-a-directory").symlink_to(elsewhere)
    (cache / "inductor").mkdir()
    (cache / "inductor" / "ab").mkdir()
    (cache / "inductor" / "ab" / "link.so").symlink_to(precious)  # named like a build: still no build
    added = watch.added_since(before)
    assert added.bytes < MIB and not watch.over_quota(added)
    watch.remove(added, everything=False)
    assert precious.read_bytes() == b"\0" * 5 * MIB
    assert not (cache / "torch_extensions" / "link-to-a-directory").is_symlink()
    assert not (cache / "inductor" / "ab" / "link.so").is_symlink()


def test_a_cache_a_variable_names_is_watched_with_its_tools_rules(tmp_path):
    cache, triton = tmp_path / "cache", tmp_path / "elsewhere" / "triton"
    watch = cache_watch(cache, {"TRITON_CACHE_DIR": str(triton), "TORCHINDUCTOR_CACHE_DIR": str(cache / "ind")},
                        quota_mb=64)
    before = watch.snapshot()
    kept = [_write(triton / "h1" / "k.json", 10), _write(cache / "ind" / "ab" / "c.so", 10)]
    gone = [_write(triton / "top.bin", 10), _write(cache / "ind" / "top.so", 10)]
    watch.remove(watch.added_since(before), everything=False)
    assert all(p.exists() for p in kept) and not any(p.exists() for p in gone)


# ------------------------------------------------------------------------------------------------ cgroups


def _fake_cgroup(tmp_path: Path, *, controllers: str, subtree: str, procs: str) -> Path:
    directory = tmp_path / "cgroup"
    directory.mkdir()
    (directory / "cgroup.controllers").write_text(controllers)
    (directory / "cgroup.subtree_control").write_text(subtree)
    (directory / "cgroup.procs").write_text(procs)
    return directory


def test_cgroup_v2_is_used_where_the_children_of_kforges_cgroup_have_the_controllers(tmp_path):
    directory = _fake_cgroup(tmp_path, controllers="cpu memory pids", subtree="memory pids", procs="1\n2\n")
    found = _version_2(directory, "/")
    assert found.version == 2 and found.bases == (("memory", str(directory)), ("pids", str(directory)))


def test_cgroup_v2_kforge_alone_in_a_delegated_cgroup_moves_into_a_leaf(tmp_path):
    directory = _fake_cgroup(tmp_path, controllers="memory pids", subtree="", procs=f"{os.getpid()}\n")
    found = _version_2(directory, "/user.slice/kforge.scope")
    assert found.version == 2 and "moved itself" in found.why
    assert (directory / LEAF / "cgroup.procs").read_text() == str(os.getpid())
    assert (directory / "cgroup.subtree_control").read_text() == "+memory +pids"


def test_cgroup_v2_says_why_not_where_kforge_shares_its_cgroup_or_has_no_controllers(tmp_path):
    shared = _version_2(_fake_cgroup(tmp_path, controllers="memory pids", subtree="", procs="1\n2\n"), "/term.scope")
    assert not shared.available and "holds 2 other process(es)" in shared.why and "Delegate=yes" in shared.why
    bare = tmp_path / "bare"
    bare.mkdir()
    (bare / "cgroup.controllers").write_text("cpu")
    assert "no memory and no pids controller" in _version_2(bare, "/").why
    (bare / "cgroup.controllers").write_text("cpu memory")
    (bare / "cgroup.subtree_control").write_text("memory")
    (bare / "cgroup.procs").write_text("")
    memory_only = _version_2(bare, "/")  # as a container's parent may give: the memory controller only
    assert memory_only.controllers == ("memory",) and "no pids controller there" in memory_only.why


needs_cgroup = pytest.mark.skipif(not cgroup_support().available, reason=cgroup_support().why)


@needs_cgroup
def test_a_worker_cgroup_counts_what_its_limits_refused_and_ends_what_is_left():
    support = cgroup_support()
    cgroup = WorkerCgroup.make(support, f"kforge-test-{os.getpid()}", memory_bytes=64 * MIB, max_pids=20)
    assert cgroup is not None
    try:
        script = ("import os, time\n"
                  "kids = []\n"
                  "try:\n"
                  "    for _ in range(50):\n"
                  "        kid = os.fork()\n"
                  "        if kid == 0: os.close(1); os.close(2); time.sleep(30); os._exit(0)\n"
                  "        kids.append(kid)\n"
                  "except OSError: pass\n"
                  "print(len(kids), flush=True)\n"
                  "data = bytearray(512 << 20)\n"
                  "for i in range(0, len(data), 4096): data[i] = 1\n")
        done = subprocess.run([sys.executable, "-c", script], preexec_fn=cgroup.join, capture_output=True,
                              text=True, timeout=60, start_new_session=True)
        pids, memory = cgroup.hits_since(LimitCounts())
        if "pids" in support.controllers:
            assert int(done.stdout.split()[0]) < 20 and "pids.max (20, harness.max_processes)" in pids
        if "memory" in support.controllers:
            assert done.returncode == -9 and "memory" in memory and "(64 MiB)" in memory
            failure, message = classify_exit(done.returncode, killed_by_harness=False, oom_evidence=memory)
            assert failure is Failure.OUT_OF_MEMORY and memory in message
    finally:
        directories = list(cgroup.directories.values())
        cgroup.end()  # the sleeping children left in it are killed, and it goes
    assert not any(d.exists() for d in directories)


# ------------------------------------------------------------------------------------------------ in the worker


def test_the_worker_names_the_limit_an_exception_met():
    limit_hits.know_limits(300, {"/tmp": 32 * MIB})
    try:
        full = OSError(errno.ENOSPC, "No space left on device", "/tmp/x.bin")
        assert "scratch space /tmp is full: a tmpfs of 32 MiB" in limit_hits.limit_reached(full)
        assert classify_exception(full) is Failure.RESOURCE_LIMIT
        disk = OSError(errno.ENOSPC, "No space left on device", "/var/lib/kforge/x")
        assert limit_hits.limit_reached(disk).startswith("the file system of /var/lib/kforge/x is full")
        for refused in (BlockingIOError(errno.EAGAIN, "Resource temporarily unavailable"),
                        RuntimeError("can't start new thread")):
            assert "(harness.max_processes = 300)" in limit_hits.limit_reached(refused)
            assert classify_exception(refused) is Failure.RESOURCE_LIMIT
        wrapped = RuntimeError("the kernel could not be built")
        wrapped.__cause__ = full
        assert classify_exception(wrapped) is Failure.RESOURCE_LIMIT  # what caused it met the limit
        for other in (OSError(errno.ENOENT, "No such file"), BlockingIOError(errno.EAGAIN, "busy", "sock"),
                      RuntimeError("shapes do not match")):
            assert limit_hits.limit_reached(other) == "" and classify_exception(other) is Failure.RUNTIME
    finally:
        limit_hits.know_limits(0, {})


def test_kforge_check_says_which_limits_apply_here(monkeypatch):
    from click.testing import CliRunner

    from kforge_core.app import App
    from kforge_core.cli import cli

    monkeypatch.setenv("KFORGE_HARNESS__SANDBOX", "off")
    monkeypatch.setenv("KFORGE_HARNESS__MAX_PROCESSES", "500")
    result = CliRunner().invoke(cli, ["check", "--sandbox"], obj=App(load_plugins=False))
    assert result.exit_code == 0, result.output
    lines = {line.split(":")[1].strip(): line for line in result.output.splitlines() if line.startswith("limit:")}
    assert set(lines) == {"scratch space", "processes and threads", "cgroup", "build caches", "rlimits"}
    assert "500 per worker (harness.max_processes)" in lines["processes and threads"]
    assert cgroup_support().why in lines["cgroup"]
