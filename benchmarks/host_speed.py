"""How steady this host's CPU is: the same fixed work in fresh processes, one after the other, on one CPU.

A launch-bound forward runs as fast as the host thread that launches it, so two workers timing the same code can
disagree by whatever the host's speed did between their turns. This prints, per fresh process pinned to one CPU for
its whole life, the median time of: a fixed loop of pure Python, a chase through a shuffled list (memory latency),
a small torch operator on the CPU, and with ``--device cuda`` a device launch and, with ``--problem``, the launch and
the whole call of a KernelBench problem's forward. On a steady host every column holds to a few percent from one
process to the next; two clusters in a column mean the CPU itself changes speed (docs/timing.md).

    python benchmarks/host_speed.py                                   # host measures only
    python benchmarks/host_speed.py --device cuda --problem level3/9_ResNet18.py --processes 8
"""

from __future__ import annotations

import argparse
import importlib.util
import json
import os
import random
import resource
import statistics
import subprocess
import sys
import time
from typing import Callable


def median_s(work: Callable[[], object], times: int) -> float:
    samples = []
    for _ in range(times):
        start = time.perf_counter()
        work()
        samples.append(time.perf_counter() - start)
    return statistics.median(samples)


def python_loop() -> None:
    stores: dict[int, int] = {}
    for i in range(200_000):
        stores[i % 1000] = i


def one_process(device: str, problem: str | None) -> dict[str, float | int]:
    """The measures of this process (it is the child)."""
    chain = list(range(1 << 22))
    random.Random(1).shuffle(chain)

    def chase() -> None:
        at = 0
        for _ in range(300_000):
            at = chain[at]

    import torch

    tiny = torch.empty(1)

    def cpu_ops() -> None:
        for _ in range(20_000):
            torch.add(tiny, tiny)

    found: dict[str, float | int] = {
        "python_ms": median_s(python_loop, 15) * 1e3,
        "chase_ns": median_s(chase, 7) / 300_000 * 1e9,
        "cpu_op_us": median_s(cpu_ops, 7) / 20_000 * 1e6,
    }
    if device == "cpu":
        return found
    on_device = torch.empty(1, device=device)
    sync = getattr(torch, device).synchronize

    def launches() -> None:
        for _ in range(20_000):
            on_device.add_(1)
        sync()

    found["launch_us"] = median_s(launches, 7) / 20_000 * 1e6
    if problem:
        found.update(forward(problem, device, sync))
    return found


def forward(problem: str, device: str, sync: Callable[[], None]) -> dict[str, float | int]:
    """The problem's forward: its launch (until the call returns) and the whole call (until the device is done), the
    host thread's CPU time over the launch, and what disturbed the thread (page faults, involuntary switches)."""
    import torch

    spec = importlib.util.spec_from_file_location("problem", problem)
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    torch.manual_seed(0)
    model = module.Model(*module.get_init_inputs()).to(device).eval()
    inputs = [x.to(device) if isinstance(x, torch.Tensor) else x for x in module.get_inputs()]
    launch, whole, cpu = [], [], []
    with torch.no_grad():
        for _ in range(20):
            model(*inputs)
        sync()
        before = resource.getrusage(resource.RUSAGE_SELF)
        for _ in range(150):
            thread, start = time.thread_time(), time.perf_counter()
            model(*inputs)
            returned, thread_end = time.perf_counter(), time.thread_time()
            sync()
            launch.append(returned - start)
            whole.append(time.perf_counter() - start)
            cpu.append(thread_end - thread)
        after = resource.getrusage(resource.RUSAGE_SELF)
    return {"launch_ms": statistics.median(launch) * 1e3, "call_ms": statistics.median(whole) * 1e3,
            "launch_cpu_ms": statistics.median(cpu) * 1e3, "page_faults": after.ru_minflt - before.ru_minflt,
            "switches": after.ru_nivcsw - before.ru_nivcsw}


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--device", default="cpu", help="cpu (host measures only) or a torch device type: cuda, xpu")
    parser.add_argument("--problem", help="a KernelBench problem file whose forward is timed too (with --device)")
    parser.add_argument("--processes", type=int, default=6)
    parser.add_argument("--cpu", type=int, help="the CPU every process is pinned to (default: the last one allowed)")
    parser.add_argument("--child", action="store_true", help=argparse.SUPPRESS)
    parser.add_argument("--json", action="store_true", help="one JSON line per process")
    args = parser.parse_args()
    if args.child:
        print(json.dumps(one_process(args.device, args.problem)), flush=True)
        return
    cpu = args.cpu if args.cpu is not None else max(os.sched_getaffinity(0))
    command = [sys.executable, __file__, "--child", "--device", args.device]
    if args.problem:
        command += ["--problem", args.problem]
    rows = []
    for index in range(args.processes):
        done = subprocess.run(command, stdout=subprocess.PIPE, text=True, check=True,
                              preexec_fn=lambda: os.sched_setaffinity(0, {cpu}))
        rows.append(json.loads(done.stdout.strip().splitlines()[-1]))
        if args.json:
            print(json.dumps(rows[-1]), flush=True)
    if args.json:
        return
    columns = list(rows[0])
    print(f"{args.processes} fresh processes, each pinned to CPU {cpu} for its whole life")
    print(f"{'process':>8} " + " ".join(f"{c:>13}" for c in columns))
    for index, row in enumerate(rows, 1):
        print(f"{index:>8} " + " ".join(f"{row[c]:>13.4g}" for c in columns))
    print(f"{'max/min':>8} " + " ".join(
        f"{max(r[c] for r in rows) / max(min(r[c] for r in rows), 1e-12):>13.2f}" for c in columns))


if __name__ == "__main__":
    main()
