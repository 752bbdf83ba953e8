"""Where a timing worker's device memory goes: the baseline worker's own requests for one problem, served in this
process, with the allocator's history recorded, step by step.

    python benchmarks/worker_memory.py PROBLEM.py --backend cuda [--runs 8]

The steps are the ones the baseline worker serves for a candidate's evaluation: ``Prepare`` (the problem's trials),
``MeasureBaselines`` with no runs (the model built), then one block of timed runs under every timer. After each
step it prints the allocator's bytes in use and reserved (what ``nvidia-smi`` counts, besides the context) and the
step's peak. At the end, the moment the most bytes were in use, from the allocator's own history: the largest
blocks alive then, each with the Python frames that allocated it. A candidate's worker times through the same
``time_runs`` on the same seeded input sets, so what grows here grows there too.
"""

from __future__ import annotations

import argparse
import os
import sys
from pathlib import Path

HERE = Path(__file__).resolve().parent
GIB = float(1 << 30)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("problem", type=Path)
    parser.add_argument("--backend", default="cuda")
    parser.add_argument("--runs", type=int, default=8, help="timed runs in the block")
    parser.add_argument("--top", type=int, default=8, help="blocks listed at the peak")
    args = parser.parse_args()

    import torch

    from kforge_core.harness.problem_size import call_bytes
    from kforge_core.harness.protocol import MeasureBaselines, Prepare, WorkerInit
    from kforge_core.harness.worker.worker import Worker
    from kforge_core.plugins import PluginSelection
    from kforge_core.problem import load_problem
    from kforge_core.settings import HarnessSettings

    settings = HarnessSettings(baselines=("eager",), spare_workers=0)
    init = WorkerInit(sys_path=tuple(sys.path), selection=PluginSelection.from_env(), backend=args.backend,
                      host_cpu=False, options=None, settings=settings, cache_dir=Path(os.getcwd()) / ".kforge-cache")
    worker = Worker(init)
    torch.cuda.memory._record_memory_history(max_entries=200_000)
    problem = load_problem(args.problem)
    steps = [("prepare", Prepare(problem)),
             ("build the eager baseline", MeasureBaselines(("eager",), runs=(0, 0))),
             (f"time {args.runs} runs, every timer", MeasureBaselines(("eager",), runs=(0, args.runs)))]
    print(f"{problem.name}: parameters and buffers {problem.weight_bytes / GIB:.2f} GiB, a call's inputs and "
          f"outputs {call_bytes(problem) / GIB:.3f} GiB")
    for name, request in steps:
        torch.cuda.reset_peak_memory_stats()
        reply = worker.handle(request)
        if reply.failure is not None:
            print(f"{name}: {reply.failure.value}: {reply.message}")
            break
        print(f"{name}: in use {torch.cuda.memory_allocated() / GIB:.2f} GiB, reserved "
              f"{torch.cuda.memory_reserved() / GIB:.2f} GiB; the step's peak in use "
              f"{torch.cuda.max_memory_allocated() / GIB:.2f} GiB, reserved "
              f"{torch.cuda.max_memory_reserved() / GIB:.2f} GiB")
    _at_the_peak(torch.cuda.memory._snapshot(), args.top)


def _at_the_peak(snapshot: dict, top: int) -> None:
    """Replay the allocator's history: the moment the most bytes were in use, and the largest blocks alive then."""
    events = [e for trace in snapshot.get("device_traces", []) for e in trace]
    live: dict[int, dict] = {}
    in_use = peak = peak_index = 0
    for index, event in enumerate(events):
        if event["action"] == "alloc":
            live[event["addr"]] = event
            in_use += event["size"]
        elif event["action"] == "free_completed" and event["addr"] in live:
            in_use -= live.pop(event["addr"])["size"]
        if in_use > peak:
            peak, peak_index = in_use, index
    live.clear()
    for event in events[:peak_index + 1]:
        if event["action"] == "alloc":
            live[event["addr"]] = event
        elif event["action"] == "free_completed":
            live.pop(event["addr"], None)
    print(f"\nthe most in use at once, in the recorded history: {peak / GIB:.2f} GiB in {len(live)} blocks; "
          f"the largest:")
    for event in sorted(live.values(), key=lambda e: -e["size"])[:top]:
        frames = [f for f in event.get("frames", []) if f.get("filename", "").endswith(".py")][:6]
        where = " <- ".join(f"{Path(f['filename']).name}:{f['line']} {f['name']}" for f in frames)
        print(f"  {event['size'] / GIB:.2f} GiB: {where or 'no Python frame'}")


if __name__ == "__main__":
    main()
