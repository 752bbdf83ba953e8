"""The cpu backend's shipped example (fused residual add + RMSNorm in Numba) against PyTorch eager and torch.compile
on this machine.

Method: each contender is timed in a process of its own (two OpenMP runtimes in one process, Numba's and
PyTorch's, would steal each other's cores), after its compilation and warm-up runs; every timed forward gets
freshly generated inputs (generated outside the timed region); a process reports its median. Rounds repeat this for
every contender in turn, so that background load hits all of them alike; the headline is the median of the rounds'
medians.

    .venv/bin/python benchmarks/cpu_example_speedup.py [--rounds 3] [--repetitions 30]
"""

from __future__ import annotations

import argparse
import importlib.util
import json
import os
import statistics
import subprocess
import sys
import time
from pathlib import Path

import kforge_cpu

EXAMPLE = Path(kforge_cpu.__file__).parent / "example"
CONTENDERS = ("eager", "torch.compile", "numba (example)")


def build(contender: str):
    import torch

    from kforge_core.problem import import_problem_module

    problem = import_problem_module(EXAMPLE / "add_rmsnorm.py")
    torch.manual_seed(0)
    reference = problem.Model(*problem.get_init_inputs())
    if contender == "eager":
        return problem, reference
    if contender == "torch.compile":
        return problem, torch.compile(reference)
    spec = importlib.util.spec_from_file_location("cpu_example_solution", EXAMPLE / "add_rmsnorm_numba.py")
    solution = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(solution)
    model = solution.ModelNew(*problem.get_init_inputs())
    model.load_state_dict(reference.state_dict())
    return problem, model


def time_contender(contender: str, warmup: int, repetitions: int) -> dict:
    """In this process: compile, check against eager, warm up, then time forwards on fresh inputs."""
    import torch

    problem, model = build(contender)
    _, reference = build("eager")
    samples = []
    with torch.no_grad():
        inputs = problem.get_inputs()
        torch.testing.assert_close(model(*inputs), reference(*inputs), atol=1e-4, rtol=1e-4)
        for run in range(warmup + repetitions):
            inputs = problem.get_inputs()
            start = time.perf_counter()
            model(*inputs)
            elapsed = time.perf_counter() - start
            if run >= warmup:
                samples.append(elapsed)
    return {"median_ms": statistics.median(samples) * 1e3, "min_ms": min(samples) * 1e3}


def run_in_child(contender: str, warmup: int, repetitions: int) -> dict:
    done = subprocess.run([sys.executable, __file__, "--child", contender, "--warmup", str(warmup),
                           "--repetitions", str(repetitions)], capture_output=True, text=True, check=True)
    return json.loads(done.stdout.strip().splitlines()[-1])


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--rounds", type=int, default=3)
    parser.add_argument("--warmup", type=int, default=3)
    parser.add_argument("--repetitions", type=int, default=30)
    parser.add_argument("--child", choices=CONTENDERS, help=argparse.SUPPRESS)
    args = parser.parse_args()
    if args.child:
        print(json.dumps(time_contender(args.child, args.warmup, args.repetitions)))
        return
    import numba
    import torch

    from kforge_cpu.machine import read_machine_facts

    facts = read_machine_facts()
    print(f"machine: {facts.model}, {facts.cpus} CPUs, {facts.simd.name}; torch {torch.__version__} "
          f"({torch.get_num_threads()} threads), numba {numba.__version__} ({numba.config.NUMBA_NUM_THREADS} threads)")
    print(f"problem: {EXAMPLE / 'add_rmsnorm.py'}, inputs 2 x [4096, 2048] float32")
    print(f"method: one process per contender and round; {args.warmup} warm-up + {args.repetitions} timed forwards, "
          f"fresh inputs each; median per process; median over {args.rounds} rounds")
    rounds: dict[str, list[float]] = {name: [] for name in CONTENDERS}
    for i in range(args.rounds):
        load = os.getloadavg()[0]
        results = {name: run_in_child(name, args.warmup, args.repetitions) for name in CONTENDERS}
        for name, result in results.items():
            rounds[name].append(result["median_ms"])
        print(f"round {i + 1} (load average {load:.2f}): "
              + ", ".join(f"{name} {r['median_ms']:.2f} ms (min {r['min_ms']:.2f})" for name, r in results.items()))
    medians = {name: statistics.median(values) for name, values in rounds.items()}
    print(f"{'contender':<18}{'median ms':>11}")
    for name, ms in medians.items():
        print(f"{name:<18}{ms:>11.3f}")
    ours = medians["numba (example)"]
    print(f"speedup of the example: {medians['eager'] / ours:.2f}x over eager, "
          f"{medians['torch.compile'] / ours:.2f}x over torch.compile (ratios of medians)")


if __name__ == "__main__":
    main()
