"""What the limits on a worker cost (``harness.scratch_limit_mb``, ``max_processes``, ``cgroups``,
``cache_quota_mb``): the median worker start with and without them (in the sandbox and out of it, starts
interleaved), a cgroup's making and removal, the cache watch's two walks per candidate over a cache of a given
size, and the peak of processes and threads in a worker's session during an evaluation (what max_processes must
leave room for).

    python benchmarks/limits_cost.py                   # CPU
    python benchmarks/limits_cost.py --device cuda     # GPU
"""

from __future__ import annotations

import dataclasses
import os
import statistics
import sys
import threading
import time
from pathlib import Path

from harness_common import arguments, backend_and_plugins, make_harness, scratch

from kforge_core.harness.host.activity import runs_worker
from kforge_core.harness.host.cache_quota import cache_watch
from kforge_core.harness.host.cgroups import cgroup_support, worker_cgroup
from kforge_core.harness.host.limits import describe_limits, limited_plan
from kforge_core.harness.host.namespaces import sandbox_plan, sandbox_status
from kforge_core.harness.host.process import WorkerProcess
from kforge_core.harness.protocol import WorkerInit


def worker_inits(args, root: Path) -> dict[str, WorkerInit]:
    """What a worker is told, per configuration: sandbox or not, limits or not."""
    harness, _ = make_harness(args, root / "init", spare_workers=0, baselines=())
    harness.close()  # only its settings are needed
    backend, selection = backend_and_plugins(args)
    settings = harness.settings
    sys_path = tuple(str(Path(p).resolve()) for p in sys.path if p and Path(p).is_dir())
    plan = sandbox_plan(scratch_root=root / "workers", cache_dir=settings.cache_dir.resolve(),
                        runs_dir=settings.runs_dir.resolve(), sys_path=sys_path)
    unlimited = dataclasses.replace(settings.harness, cgroups="off")
    base = WorkerInit(sys_path=sys_path, selection=selection, backend=backend.name, host_cpu=backend.device == "cpu",
                      options=settings.backend_options(backend), settings=settings.harness,
                      cache_dir=settings.cache_dir.resolve())
    inits = {"no sandbox, no limits": dataclasses.replace(base, settings=unlimited),
             "no sandbox, limits": base}
    if sandbox_status().available:
        inits["sandbox, no limits"] = dataclasses.replace(base, settings=unlimited, sandbox=plan)
        inits["sandbox, limits"] = dataclasses.replace(base, sandbox=limited_plan(plan, settings.harness,
                                                                                  harness.problem))
    return inits


def worker_starts(inits: dict[str, WorkerInit], root: Path, count: int) -> dict[str, list[float]]:
    """Seconds from a worker's start to its first answer, the configurations interleaved ``count`` times."""
    seconds: dict[str, list[float]] = {name: [] for name in inits}
    for i in range(count):
        for name, init in inits.items():
            start = time.perf_counter()
            worker = WorkerProcess(init, root / "workers" / f"{i}-{name.replace(' ', '')}")
            reply = worker.receive(300, "starting the worker")
            seconds[name].append(time.perf_counter() - start)
            worker.close()
            if reply.failure is not None:
                raise SystemExit(f"the worker did not start ({name}): {reply.message}")
    return seconds


def cgroup_cost(settings, count: int = 20) -> float | None:
    """The median seconds to make a worker's cgroup and remove it (None where none can be made)."""
    if not cgroup_support(settings.cgroups).available:
        return None
    seconds = []
    for _ in range(count):
        start = time.perf_counter()
        cgroup = worker_cgroup(cgroups=settings.cgroups, memory_limit_mb=settings.memory_limit_mb,
                               max_processes=settings.max_processes)
        if cgroup is not None:
            cgroup.end()
        seconds.append(time.perf_counter() - start)
    return statistics.median(seconds)


def cache_watch_cost(root: Path, files: int) -> tuple[float, float]:
    """Seconds of a candidate's snapshot and of its end's walk (nothing added) over a cache of ``files`` files
    in Inductor's layout (256 directories)."""
    cache = root / "cache-watch"
    for i in range(files):
        path = cache / "inductor" / f"{i % 256:02x}" / f"c{i:08d}.py"
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_bytes(b"x" * 64)
    watch = cache_watch(cache, {}, quota_mb=2048)
    start = time.perf_counter()
    before = watch.snapshot()
    snapshot = time.perf_counter() - start
    start = time.perf_counter()
    watch.remove(watch.added_since(before), everything=False)
    return snapshot, time.perf_counter() - start


def peak_tasks(args, root: Path) -> tuple[int, int]:
    """The most processes and threads the worker's session held at once while one candidate was evaluated with
    both baselines, and the cores."""
    harness, candidate = make_harness(args, root / "peak", spare_workers=0, baselines=("eager", "compile"),
                                      sandbox="off")
    peak, done = [0], threading.Event()
    mine = os.getsid(0)

    def sample() -> None:
        while not done.is_set():
            by_session: dict[int, int] = {}
            for entry in os.listdir("/proc"):
                try:
                    session = os.getsid(int(entry)) if entry.isdigit() else None
                    if session is not None and session != mine:
                        by_session[session] = by_session.get(session, 0) + len(os.listdir(f"/proc/{entry}/task"))
                except OSError:
                    continue
            workers = [n for s, n in by_session.items() if _is_worker(s)]
            peak[0] = max([peak[0], *workers])
            time.sleep(0.02)

    sampler = threading.Thread(target=sample, daemon=True)
    sampler.start()
    with harness:
        harness.evaluate(candidate)
    done.set()
    sampler.join()
    return peak[0], os.cpu_count() or 1


def _is_worker(pid: int) -> bool:
    """Whether ``pid`` runs a worker, executed or forked from a template (not the template itself)."""
    return runs_worker(pid)


def main() -> None:
    parser = arguments(__doc__.splitlines()[0])
    parser.add_argument("--starts", type=int, default=5, help="worker starts per configuration")
    parser.add_argument("--cache-files", type=int, default=20000, help="files in the cache the watch walks")
    args = parser.parse_args()
    with scratch() as directory:
        root = Path(directory)
        inits = worker_inits(args, root)
        settings = next(iter(inits.values())).settings
        limited = dataclasses.replace(settings, cgroups="auto")
        print("limits here (kforge check --sandbox):")
        for line in describe_limits(limited, sandbox_status().available):
            print(f"  {line.name}: {line.applies}")
        starts = worker_starts(inits, root, args.starts)
        made = cgroup_cost(limited)
        snapshot, end = cache_watch_cost(root, args.cache_files)
        tasks, cores = peak_tasks(args, root)
    print(f"\nmedian worker start of {args.starts} (device {args.backend or args.device}):")
    for name, seconds in starts.items():
        print(f"  {name:24}{statistics.median(seconds):8.3f} s   (min {min(seconds):.3f}, max {max(seconds):.3f})")
    print(f"a worker's cgroup made and removed: {made * 1e3:.1f} ms" if made is not None else "no cgroup here")
    print(f"cache watch over {args.cache_files} files: snapshot {snapshot * 1e3:.0f} ms, end {end * 1e3:.0f} ms")
    print(f"peak processes and threads in a worker's session: {tasks} on {cores} cores")


if __name__ == "__main__":
    main()
