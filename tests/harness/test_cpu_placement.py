"""Where an accelerator's workers run on the host: one NUMA node for all, one CPU of it for every timed block."""

from __future__ import annotations

import os
import threading

import pytest

from kforge_core.harness import cpu_placement
from kforge_core.harness.cpu_placement import CpuPlacement, choose_placement, on_timing_cpu, settle, settled

pytestmark = pytest.mark.skipif(not hasattr(os, "sched_getaffinity"), reason="no CPU affinity on this OS")


def _nodes(tmp_path, *lists: str):
    for index, text in enumerate(lists):
        (tmp_path / f"node{index}").mkdir()
        (tmp_path / f"node{index}" / "cpulist").write_text(text + "\n")
    return tmp_path


def test_the_node_with_most_usable_cpus_is_chosen_and_its_last_cpu_times(tmp_path, monkeypatch):
    monkeypatch.setattr(os, "sched_getaffinity", lambda pid: {0, 1, 2, 3, 8, 9, 10})
    (tmp_path / "nodes").mkdir()
    claimed = choose_placement(_nodes(tmp_path / "nodes", "0-7", "8-15"), tmp_path / "claims")
    # node 0 has four this process may use, node 1 three; the last times, the others take the rest
    assert claimed.placement == CpuPlacement((0, 1, 2), 3)
    assert claimed.placement.describe() == "workers on CPUs 0-2, timed blocks on CPU 3"
    claimed.release()


def test_without_numa_nodes_the_allowed_cpus_are_one_node(tmp_path, monkeypatch):
    claims = tmp_path / "claims"
    monkeypatch.setattr(os, "sched_getaffinity", lambda pid: {4, 5, 7})
    claimed = choose_placement(tmp_path, claims)
    assert claimed.placement == CpuPlacement((4, 5, 7), 7)  # three CPUs: none kept for timing alone
    assert claimed.placement.describe() == "workers on CPUs 4-5,7, timed blocks on CPU 7"
    claimed.release()
    monkeypatch.setattr(os, "sched_getaffinity", lambda pid: {4, 5, 6, 7})
    claimed = choose_placement(tmp_path, claims)
    assert claimed.placement == CpuPlacement((4, 5, 6), 7)
    claimed.release()
    monkeypatch.setattr(os, "sched_getaffinity", lambda pid: {6})
    claimed = choose_placement(tmp_path, claims)
    assert claimed.placement == CpuPlacement((6,), 6)  # one CPU: everything on it
    claimed.release()


def test_two_harnesses_on_one_host_never_time_on_the_same_cpu(tmp_path, monkeypatch):
    """Each claims its timing CPU (a lock, even within one process: one harness per device of --devices); a CPU
    released is free again, and with every CPU claimed there is no placement."""
    claims = tmp_path / "claims"
    monkeypatch.setattr(os, "sched_getaffinity", lambda pid: {0, 1, 2, 3})
    first, second = choose_placement(tmp_path, claims), choose_placement(tmp_path, claims)
    assert (first.placement.timing_cpu, second.placement.timing_cpu) == (3, 2)
    assert 2 in first.placement.node_cpus and 3 not in first.placement.node_cpus
    third, fourth = choose_placement(tmp_path, claims), choose_placement(tmp_path, claims)
    assert choose_placement(tmp_path, claims) is None  # all four claimed
    second.release()
    again = choose_placement(tmp_path, claims)
    assert again.placement.timing_cpu == 2
    for claimed in (first, third, fourth, again):
        claimed.release()


def test_a_timed_block_runs_on_the_timing_cpu_and_the_thread_is_put_back_after(monkeypatch):
    allowed = sorted(os.sched_getaffinity(0))
    monkeypatch.setattr(cpu_placement, "_settled", [])
    with on_timing_cpu():  # no placement: anywhere
        assert sorted(os.sched_getaffinity(0)) == allowed
    seen: dict[str, object] = {}

    def worker() -> None:  # in a thread of its own, as a worker's main thread: the test's thread keeps its CPUs
        settle(CpuPlacement(tuple(allowed), allowed[-1]))
        seen["named"] = settled().timing_cpu
        with on_timing_cpu():
            seen["during"] = os.sched_getaffinity(0)
        seen["after"] = os.sched_getaffinity(0)

    thread = threading.Thread(target=worker)
    thread.start()
    thread.join()
    assert seen["during"] == {allowed[-1]} and sorted(seen["after"]) == allowed and seen["named"] == allowed[-1]


def test_no_harness_runs_its_workers_on_another_harness_timing_cpu(tmp_path, monkeypatch):
    """On a 64-CPU node (four GPUs, a harness each) the top eight are the timing pool: four harnesses time on
    63, 62, 61 and 60, and every one's workers keep to 0-55, so a referee judging or a build for one device never
    runs where another device's candidate is timed."""
    claims = tmp_path / "claims"
    monkeypatch.setattr(os, "sched_getaffinity", lambda pid: set(range(64)))
    assert cpu_placement.timing_pool(list(range(64)), tmp_path) == list(range(56, 64))
    assert cpu_placement.timing_pool(list(range(16)), tmp_path) == [14, 15]
    harnesses = [choose_placement(tmp_path, claims, tmp_path) for _ in range(4)]
    timing = [claimed.placement.timing_cpu for claimed in harnesses]
    assert timing == [63, 62, 61, 60]
    for claimed in harnesses:
        assert claimed.placement.node_cpus == tuple(range(56))
        assert not set(timing) & set(claimed.placement.node_cpus)
        claimed.release()


def _siblings(cpus_dir, pairs):
    for pair in pairs:
        for cpu in pair:
            topology = cpus_dir / f"cpu{cpu}" / "topology"
            topology.mkdir(parents=True)
            topology.joinpath("thread_siblings_list").write_text(",".join(map(str, pair)) + "\n")
    return cpus_dir


def test_the_timing_cpus_are_threads_of_cores_of_their_own_and_no_worker_runs_on_their_cores(tmp_path, monkeypatch):
    """A 16-CPU node of 8 cores: with a core's threads numbered apart (k and k + 8), the pool is 14 and 15 and the
    workers keep off 6 and 7 too; numbered side by side (2k and 2k + 1), the pool is 13 and 15, never 14 and 15 (two
    harnesses would time on one core), and the workers keep to 0-11."""
    monkeypatch.setattr(os, "sched_getaffinity", lambda pid: set(range(16)))
    apart = _siblings(tmp_path / "apart", [(k, k + 8) for k in range(8)])
    assert cpu_placement.timing_pool(list(range(16)), apart) == [14, 15]
    claimed = choose_placement(tmp_path / "nodes", tmp_path / "claims-apart", apart)
    assert claimed.placement == CpuPlacement((0, 1, 2, 3, 4, 5, 8, 9, 10, 11, 12, 13), 15)
    claimed.release()
    adjacent = _siblings(tmp_path / "adjacent", [(2 * k, 2 * k + 1) for k in range(8)])
    assert cpu_placement.timing_pool(list(range(16)), adjacent) == [13, 15]
    claimed = choose_placement(tmp_path / "nodes", tmp_path / "claims-adjacent", adjacent)
    assert claimed.placement == CpuPlacement(tuple(range(12)), 15)
    claimed.release()
    assert cpu_placement.outside_timing_pools(set(range(16)), [set(range(16))], adjacent) == set(range(12))
