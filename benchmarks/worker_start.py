"""What a worker's start costs, executed as a new interpreter against forked from a template that imported torch
once (``harness.worker_start``), without and with the sandbox: the wall time from starting a worker to its first
answer, and the CPU time the whole machine spent meanwhile (every process's, from ``/proc/stat``: the forked
worker's work is done partly in processes that are not this one's children). The first forked start includes the
template's own; it is printed apart. Then cold evaluations (a new worker for each candidate), both ways.

    python benchmarks/worker_start.py                  # CPU
    python benchmarks/worker_start.py --device cuda    # GPU
"""

from __future__ import annotations

import os
import statistics
import sys
import time
from pathlib import Path

from harness_common import arguments, backend_and_plugins, cold_evaluations, make_harness, scratch

from kforge_core.harness.host.namespaces import sandbox_plan, sandbox_status
from kforge_core.harness.host.process import WorkerProcess
from kforge_core.harness.protocol import WorkerInit

STARTS = ("exec", "fork")


def machine_cpu_seconds() -> float:
    """CPU time every process of the machine has used since boot (user, nice, system, irq, softirq, steal)."""
    with open("/proc/stat") as f:
        fields = [int(value) for value in f.readline().split()[1:9]]
    return (sum(fields) - fields[3] - fields[4]) / os.sysconf("SC_CLK_TCK")  # without idle and iowait


def worker_starts(args, root: Path, start: str, sandbox: bool) -> tuple[list[float], list[float]]:
    """Seconds to the first answer, and the machine's CPU seconds meanwhile, of ``args.starts`` worker starts."""
    harness, _ = make_harness(args, root / f"init-{start}-{sandbox}", spare_workers=0, baselines=(),
                              worker_start=start, sandbox="required" if sandbox else "off")
    harness.close()  # only its settings are needed
    backend, selection = backend_and_plugins(args)
    settings = harness.settings
    sys_path = tuple(str(Path(p).resolve()) for p in sys.path if p and Path(p).is_dir())
    plan = sandbox_plan(scratch_root=root / "homes", cache_dir=settings.cache_dir.resolve(),
                        runs_dir=settings.runs_dir.resolve(), sys_path=sys_path) if sandbox else None
    init = WorkerInit(sys_path=sys_path, selection=selection, backend=backend.name, host_cpu=backend.device == "cpu",
                      options=settings.backend_options(backend), settings=settings.harness,
                      cache_dir=settings.cache_dir.resolve(), sandbox=plan)
    walls, cpus = [], []
    for i in range(args.starts):
        cpu, began = machine_cpu_seconds(), time.perf_counter()
        worker = WorkerProcess(init, root / "homes" / f"{start}-{sandbox}-{i}")
        reply = worker.receive(300, "starting the worker")
        walls.append(time.perf_counter() - began)
        cpus.append(machine_cpu_seconds() - cpu)
        worker.close()
        if reply.failure is not None:
            raise SystemExit(f"the worker did not start ({start}): {reply.message}")
    return walls, cpus


def main() -> None:
    parser = arguments(__doc__.splitlines()[0])
    parser.add_argument("--starts", type=int, default=7, help="worker starts per way and sandbox")
    parser.add_argument("--candidates", type=int, default=3, help="cold evaluations per way")
    args = parser.parse_args()
    sandboxes = (False, True) if sandbox_status().available else (False,)
    rows = []
    with scratch() as root:
        for sandbox in sandboxes:
            for start in STARTS:
                walls, cpus = worker_starts(args, Path(root), start, sandbox)
                rows.append((f"worker start, {start}, {'sandbox' if sandbox else 'no sandbox'}", walls, cpus))
        colds = {start: cold_evaluations(args, Path(root) / f"cold-{start}", args.candidates, worker_start=start)
                 for start in STARTS}
    print(f"worker start ({args.backend or args.device}; medians of the {args.starts - 1} starts after the first, "
          f"{os.cpu_count()} cores)")
    print(f"  {'':36}{'first wall s':>13}{'wall s':>9}{'first CPU s':>13}{'CPU s':>8}")
    for name, walls, cpus in rows:
        print(f"  {name:36}{walls[0]:13.3f}{statistics.median(walls[1:]):9.3f}{cpus[0]:13.2f}"
              f"{statistics.median(cpus[1:]):8.2f}")
    print(f"  cold evaluation (median of {args.candidates}): " +
          ", ".join(f"{start} {statistics.median(colds[start]):.3f} s" for start in STARTS))


if __name__ == "__main__":
    main()
