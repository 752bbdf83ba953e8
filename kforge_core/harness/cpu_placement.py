"""Where on the host's CPUs the workers of an accelerator run: every worker on one NUMA node, and every timed block,
the candidate's and the baselines', on one and the same CPU of it.

A forward whose time is set by the host's launches runs as fast as the CPU that launches it: on a 16-core H200
machine, ResNet-18's forward took 1.88, 2.82 and 3.73 ms of wall time in three processes started one after the other
(the same code, the device busy 0.53 ms each time), and the baseline's worker and the candidate's differed by as much,
so the same code came out up to 2.3x "faster" than itself. A process whose memory was first touched on one node
and whose thread runs on another pays for every access; two threads on two CPUs of different speed or load time
differently. So each worker is started on the chosen node (what it allocates is local to it) and kept off one of
its CPUs, on which its main thread times: the candidate's blocks and the baselines' take turns on that CPU (they never
overlap), and no worker's other work (a referee judging, a spare preparing) runs there meanwhile. Each harness
claims its own timing CPU (a lock under the host's temporary directory), so that harnesses side by side on one host
(one per device, or several commands) never time on the same CPU; and the timing CPUs come from a pool at the top of
the node that no harness's workers run on (:func:`timing_pool`), so that one harness's referee or build never runs
on another's timing CPU. The pool takes one hardware thread of a core, and the core's other threads (its SMT
siblings) are kept from the workers too: a build on the other thread of the timing CPU's core shares that core's
execution units with the launches being timed. Not on the host CPU, whose timed work runs on all its cores.
"""

from __future__ import annotations

import contextlib
import fcntl
import os
import tempfile
from dataclasses import dataclass
from pathlib import Path
from typing import Iterator

NODES = Path("/sys/devices/system/node")
CPUS = Path("/sys/devices/system/cpu")
RESERVE_FROM_CPUS = 4  # the timing CPU is kept from the workers' other work only where the node has this many
POOL_SHARE = 8  # one CPU in this many of a node is in the timing pool (at least one, at most POOL_MOST)
POOL_MOST = 8  # harnesses timing side by side on one host that never share a CPU with another's workers
CLAIMS_DIR = "kforge-timing-cpus"  # under the host's temporary directory: one lock per claimed timing CPU


@dataclass(frozen=True)
class CpuPlacement:
    """:param node_cpus: the CPUs every worker runs on outside its timed blocks (the node's, less the timing CPU
    where it has others). :param timing_cpu: the one the timed blocks run on."""

    node_cpus: tuple[int, ...]
    timing_cpu: int

    def describe(self) -> str:
        return f"workers on CPUs {_ranges(self.node_cpus)}, timed blocks on CPU {self.timing_cpu}"


def timing_pool(node: list[int], cpus_dir: Path = CPUS) -> list[int]:
    """The CPUs of ``node`` (sorted) kept for timed blocks alone: from its highest, one in :data:`POOL_SHARE` (at
    least one, at most :data:`POOL_MOST`), never two threads of one core; none on a node of fewer than
    :data:`RESERVE_FROM_CPUS` CPUs. On a 16-CPU node two, on a 64-CPU node of four GPUs eight."""
    if len(node) < RESERVE_FROM_CPUS:
        return []
    size = min(POOL_MOST, max(1, len(node) // POOL_SHARE))
    pool: list[int] = []
    taken: set[int] = set()
    for cpu in reversed(node):
        if cpu in taken:
            continue
        pool.append(cpu)
        taken |= {cpu} | smt_siblings([cpu], cpus_dir)
        if len(pool) == size:
            break
    return sorted(pool)


def kept_from_workers(pool: list[int], cpus_dir: Path = CPUS) -> set[int]:
    """The CPUs no worker runs on: the timing pool's and their cores' other threads."""
    return set(pool) | smt_siblings(pool, cpus_dir)


def smt_siblings(cpus: list[int], cpus_dir: Path = CPUS) -> set[int]:
    """The other hardware threads of the cores ``cpus`` are threads of (Linux's ``thread_siblings_list``)."""
    found: set[int] = set()
    for cpu in cpus:
        try:
            found |= _parse_list((cpus_dir / f"cpu{cpu}" / "topology" / "thread_siblings_list").read_text())
        except (OSError, ValueError):
            continue
    return found - set(cpus)


def choose_placement(nodes_dir: Path = NODES, claims_dir: Path | None = None,
                     cpus_dir: Path = CPUS) -> ClaimedPlacement | None:
    """The NUMA node with the most CPUs this process may use (the lowest of equals), and the highest CPU of its
    :func:`timing_pool` that no other harness on this host times on (each claims its timing CPU with a lock in
    ``claims_dir``, held until :meth:`ClaimedPlacement.release` or the process's end: eight harnesses of parallel
    tests, or one per device of ``--devices``, timing on one CPU would slow each other's timed calls); with the pool
    all claimed, the highest unclaimed CPU outside it. The node's CPUs outside the pool (and outside the claimed one)
    are for everything else the workers do, so that no worker's other work, this harness's or another's, shares a
    timing CPU with a timed block; on a node of fewer than :data:`RESERVE_FROM_CPUS` CPUs the workers keep them all
    (one would leave too few). CPU 0, where interrupts are often served, is claimed last. None where this process
    may not set affinities (not Linux) or every CPU of the node is claimed."""
    if not hasattr(os, "sched_getaffinity"):
        return None
    allowed = os.sched_getaffinity(0)
    nodes = [cpus & allowed for cpus in _node_cpus(nodes_dir)] or [allowed]
    chosen = sorted(max(nodes, key=len))
    pool = timing_pool(chosen, cpus_dir)
    kept = kept_from_workers(pool, cpus_dir)
    claims_dir = claims_dir or Path(tempfile.gettempdir()) / CLAIMS_DIR
    for cpu in reversed(chosen):  # the pool first: it is the node's top
        lock = _claim(claims_dir, cpu)
        if lock is None:
            continue
        others = [c for c in chosen if c != cpu and c not in kept] if pool else chosen
        return ClaimedPlacement(CpuPlacement(tuple(others), cpu), lock)
    return None


def off_timing_pools(nodes_dir: Path = NODES, cpus_dir: Path = CPUS) -> None:
    """Keep this process off every node's :func:`timing_pool` (:func:`outside_timing_pools`): a helper of the
    KForge process (one that describes problems ahead) never runs on a CPU that timed blocks run on."""
    if not hasattr(os, "sched_getaffinity"):
        return
    allowed = os.sched_getaffinity(0)
    with contextlib.suppress(OSError):
        os.sched_setaffinity(0, outside_timing_pools(allowed, _node_cpus(nodes_dir), cpus_dir))


def outside_timing_pools(allowed: set[int], nodes: list[set[int]], cpus_dir: Path = CPUS) -> set[int]:
    """The CPUs of ``allowed`` kept from no node's workers (:func:`kept_from_workers`); all of them where nothing
    would be left."""
    pools = {cpu for cpus in nodes
             for cpu in kept_from_workers(timing_pool(sorted(cpus & allowed), cpus_dir), cpus_dir)}
    return (allowed - pools) or allowed


class ClaimedPlacement:
    """A placement whose timing CPU this harness holds (:func:`choose_placement`)."""

    def __init__(self, placement: CpuPlacement, lock: int) -> None:
        self.placement, self._lock = placement, lock

    def release(self) -> None:
        if self._lock >= 0:
            os.close(self._lock)  # the lock goes with the descriptor
            self._lock = -1


def _claim(claims_dir: Path, cpu: int) -> int | None:
    """A descriptor holding ``cpu``'s lock, or None where another harness holds it (or no lock can be made: then
    the CPU is taken unclaimed)."""
    try:
        claims_dir.mkdir(parents=True, exist_ok=True)
        fd = os.open(claims_dir / f"cpu{cpu}.lock", os.O_RDWR | os.O_CREAT, 0o666)
    except OSError:
        return -1
    try:
        fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
    except OSError:
        os.close(fd)
        return None
    return fd


def _node_cpus(nodes_dir: Path) -> list[set[int]]:
    found = []
    for node in sorted(nodes_dir.glob("node[0-9]*"), key=lambda p: int(p.name[4:])):
        try:
            found.append(_parse_list((node / "cpulist").read_text()))
        except (OSError, ValueError):
            continue
    return found


def _parse_list(text: str) -> set[int]:
    """Linux's CPU list ("0-3,8,10-11")."""
    cpus: set[int] = set()
    for part in text.strip().split(","):
        if not part:
            continue
        first, _, last = part.partition("-")
        cpus.update(range(int(first), int(last or first) + 1))
    return cpus


def _ranges(cpus: tuple[int, ...]) -> str:
    spans, start = [], None
    for index, cpu in enumerate(cpus):
        if start is None:
            start = cpu
        if index + 1 == len(cpus) or cpus[index + 1] != cpu + 1:
            spans.append(f"{start}-{cpu}" if cpu != start else f"{cpu}")
            start = None
    return ",".join(spans)


# ------------------------------------------------------------------------------------------------ in workers

_settled: list[CpuPlacement] = []  # this worker's placement, set once as it starts


def settle(placement: CpuPlacement | None) -> None:
    """In a worker, before anything is imported: run on the placement's node, and keep the placement."""
    if placement is None:
        return
    with contextlib.suppress(OSError):
        os.sched_setaffinity(0, placement.node_cpus)
        _settled[:] = [placement]


def settled() -> CpuPlacement | None:
    """This worker's placement (None: it runs wherever the OS puts it)."""
    return _settled[0] if _settled else None


@contextlib.contextmanager
def on_timing_cpu() -> Iterator[None]:
    """The calling thread on the timing CPU for the block (the others stay where they are), put back after."""
    placement = settled()
    before = os.sched_getaffinity(0) if placement is not None else None
    try:
        if placement is not None:
            os.sched_setaffinity(0, {placement.timing_cpu})
    except OSError:
        before = None
    try:
        yield
    finally:
        if before is not None:
            with contextlib.suppress(OSError):
                os.sched_setaffinity(0, before)
