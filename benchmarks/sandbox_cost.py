"""What the worker sandbox (Linux namespaces, ``harness.sandbox``) costs: the median time to start a worker (until
it has imported torch and the plugins and answered) and of a cold evaluation (a new worker per candidate, as the
first candidate of a bench problem gets), without and with the sandbox, side by side. The probe that decides
whether the sandbox is available runs once per KForge process; its time is printed too.

    python benchmarks/sandbox_cost.py                  # CPU
    python benchmarks/sandbox_cost.py --device cuda    # GPU
"""

from __future__ import annotations

import statistics
import subprocess
import sys
import time
from pathlib import Path

from harness_common import arguments, backend_and_plugins, cold_evaluations, make_harness, scratch

from kforge_core.harness.host.namespaces import sandbox_plan, sandbox_status, sandboxed_command
from kforge_core.harness.host.process import WorkerProcess
from kforge_core.harness.protocol import WorkerInit

MODES = ("off", "required")


def worker_starts(args, root: Path, mode: str) -> list[float]:
    """Seconds from starting a worker to its first answer, ``args.starts`` times."""
    harness, _ = make_harness(args, root / f"init-{mode}", sandbox=mode, spare_workers=0, baselines=())
    harness.close()  # only its settings are needed
    backend, selection = backend_and_plugins(args)
    settings = harness.settings
    sys_path = tuple(str(Path(p).resolve()) for p in sys.path if p and Path(p).is_dir())
    plan = None if mode == "off" else sandbox_plan(
        scratch_root=root / mode, cache_dir=settings.cache_dir.resolve(), runs_dir=settings.runs_dir.resolve(),
        sys_path=sys_path)
    init = WorkerInit(sys_path=sys_path, selection=selection, backend=backend.name, host_cpu=backend.device == "cpu",
                      options=settings.backend_options(backend), settings=settings.harness,
                      cache_dir=settings.cache_dir.resolve(), sandbox=plan)
    seconds = []
    for i in range(args.starts):
        start = time.perf_counter()
        worker = WorkerProcess(init, root / mode / f"worker-{i}")
        reply = worker.receive(300, "starting the worker")
        seconds.append(time.perf_counter() - start)
        worker.close()
        if reply.failure is not None:
            raise SystemExit(f"the worker did not start ({mode}): {reply.message}")
    return seconds


def launcher_runs(count: int, plan, home: Path) -> dict[str, list[float]]:
    """Seconds to run ``true`` directly and through the sandbox's launcher (its own cost, without Python's)."""
    rows: dict[str, list[float]] = {"off": [], "required": []}
    for _ in range(count):
        for mode, command in (("off", ["true"]), ("required", sandboxed_command(plan, ["true"], {}, home))):
            start = time.perf_counter()
            subprocess.run(command, check=True)
            rows[mode].append(time.perf_counter() - start)
    return rows


def main() -> None:
    parser = arguments(__doc__.splitlines()[0])
    parser.add_argument("--starts", type=int, default=7, help="worker starts per mode")
    parser.add_argument("--candidates", type=int, default=3, help="cold evaluations per mode")
    args = parser.parse_args()
    start = time.perf_counter()
    status = sandbox_status()
    probe = time.perf_counter() - start
    if not status.available:
        raise SystemExit(f"no sandbox to measure here: {status.why}")
    with scratch() as root:
        plan = sandbox_plan(scratch_root=Path(root) / "launcher", cache_dir=Path(root) / "cache",
                            runs_dir=Path(root) / "runs", sys_path=[p for p in sys.path if p])
        launches = launcher_runs(20, plan, Path(root) / "launcher")
        starts = {mode: worker_starts(args, Path(root), mode) for mode in MODES}
        colds = {mode: cold_evaluations(args, Path(root) / f"cold-{mode}", args.candidates, sandbox=mode)
                 for mode in MODES}
    print(f"worker sandbox cost ({args.problem}, device {args.backend or args.device}; medians of {args.starts} "
          f"worker starts and {args.candidates} cold evaluations)")
    print(f"  availability probe, once per KForge process: {probe:.3f} s")
    print(f"  {'':28}{'no sandbox s':>14}{'sandbox s':>12}{'cost s':>10}")
    for name, rows in (("launch of `true`", launches), ("worker start", starts), ("cold evaluation", colds)):
        off, on = statistics.median(rows["off"]), statistics.median(rows["required"])
        print(f"  {name:28}{off:14.3f}{on:12.3f}{on - off:10.3f}")


if __name__ == "__main__":
    main()
