"""The cpu backend's shipped example (fused residual add + RMSNorm in Numba) against PyTorch eager and torch.compile
on this machine.

Method: the three contenders run interleaved (one forward of each per round, so background load hits all alike),
after warm-up rounds; every timed forward gets freshly generated inputs (generated outside the timed region); the
headline is the median. torch.compile's and Numba's compile times are excluded (both compile before timing).

    .venv/bin/python benchmarks/cpu_example_speedup.py [--rounds 30]
"""

from __future__ import annotations

import argparse
import importlib.util
import os
import platform
import statistics
import time
from pathlib import Path

import numba
import torch

import kforge_cpu
from kforge_core.problem import import_problem_module
from kforge_cpu.machine import read_machine_facts

EXAMPLE = Path(kforge_cpu.__file__).parent / "example"


def import_solution():
    spec = importlib.util.spec_from_file_location("cpu_example_solution", EXAMPLE / "add_rmsnorm_numba.py")
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


def build_contenders(problem, solution):
    torch.manual_seed(0)
    reference = problem.Model(*problem.get_init_inputs())
    candidate = solution.ModelNew(*problem.get_init_inputs())
    candidate.load_state_dict(reference.state_dict())
    compiled = torch.compile(reference)
    return {"eager": reference, "torch.compile": compiled, "numba (example)": candidate}


def check_correct(contenders, problem) -> None:
    inputs = problem.get_inputs()
    with torch.no_grad():
        expected = contenders["eager"](*inputs)
        for name, model in contenders.items():
            torch.testing.assert_close(model(*inputs), expected, atol=1e-4, rtol=1e-4,
                                       msg=lambda m, n=name: f"{n}: {m}")


def measure(contenders, problem, warmup: int, rounds: int) -> dict[str, list[float]]:
    times: dict[str, list[float]] = {name: [] for name in contenders}
    with torch.no_grad():
        for round_index in range(warmup + rounds):
            for name, model in contenders.items():
                inputs = problem.get_inputs()
                start = time.perf_counter()
                model(*inputs)
                elapsed = time.perf_counter() - start
                if round_index >= warmup:
                    times[name].append(elapsed)
    return times


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--rounds", type=int, default=30)
    parser.add_argument("--warmup", type=int, default=3)
    args = parser.parse_args()
    problem = import_problem_module(EXAMPLE / "add_rmsnorm.py")
    facts = read_machine_facts()
    print(f"machine: {facts.model}, {facts.cpus} CPUs, {facts.simd.name}; {platform.python_implementation()} "
          f"{platform.python_version()}, torch {torch.__version__} ({torch.get_num_threads()} threads), "
          f"numba {numba.__version__} ({numba.get_num_threads()} threads)")
    print(f"problem: {EXAMPLE / 'add_rmsnorm.py'}: {[list(x.shape) for x in problem.get_inputs()]} float32")
    contenders = build_contenders(problem, import_solution())
    start = time.perf_counter()
    check_correct(contenders, problem)  # also compiles (torch.compile, Numba JIT): excluded from the timing
    seconds = time.perf_counter() - start
    print(f"all three agree within atol=rtol=1e-4 (first calls, compilation included: {seconds:.1f} s)")
    load_before = os.getloadavg()[0]
    times = measure(contenders, problem, args.warmup, args.rounds)
    print(f"method: {args.warmup} warm-up + {args.rounds} timed rounds, contenders interleaved, fresh inputs per "
          f"forward; load average {load_before:.2f} before, {os.getloadavg()[0]:.2f} after")
    print(f"{'contender':<18}{'median ms':>11}{'min ms':>9}{'CV %':>7}")
    medians = {}
    for name, samples in times.items():
        medians[name] = statistics.median(samples)
        cv = 100 * statistics.stdev(samples) / statistics.mean(samples)
        print(f"{name:<18}{medians[name] * 1e3:>11.3f}{min(samples) * 1e3:>9.3f}{cv:>7.1f}")
    ours = medians["numba (example)"]
    print(f"speedup of the example: {medians['eager'] / ours:.2f}x over eager, "
          f"{medians['torch.compile'] / ours:.2f}x over torch.compile (ratios of medians)")


if __name__ == "__main__":
    main()
