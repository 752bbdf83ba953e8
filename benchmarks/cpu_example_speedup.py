"""The cpu backend's shipped example (fused residual add + RMSNorm in Numba) against PyTorch eager and torch.compile
on this machine, measured by the harness exactly as ``kforge eval`` measures it (its workers, warm-up, fresh
input sets per timed run, the baselines in the same conditions); compile times are excluded.

    .venv/bin/python benchmarks/cpu_example_speedup.py [--repetitions 30] [--rounds 3]

Each round is one ``Harness.evaluate`` of the example (the baselines are measured once per Harness, each round makes
a fresh Harness); the script prints every round and the median of the rounds' medians.
"""

from __future__ import annotations

import argparse
import dataclasses
import os
import statistics
import tempfile
from pathlib import Path

import numba
import torch

import kforge_cpu
from kforge_core.harness import Harness, TimingMethod
from kforge_core.plugins import PluginSelection, build_plugin_manager
from kforge_core.problem import load_problem
from kforge_core.records import Candidate
from kforge_core.registry import BackendRegistry
from kforge_core.settings import Settings
from kforge_cpu.machine import read_machine_facts

EXAMPLE = Path(kforge_cpu.__file__).parent / "example"
SELECTION = PluginSelection(only=("cpu",))


def one_round(settings: Settings) -> tuple[dict[str, float], TimingMethod]:
    backend = BackendRegistry(build_plugin_manager(SELECTION)).get("cpu").backend
    problem = load_problem(EXAMPLE / "add_rmsnorm.py")
    with Harness(backend=backend, problem=problem, settings=settings, plugins=SELECTION) as harness:
        verdict = harness.evaluate(Candidate.from_path(EXAMPLE / "add_rmsnorm_numba.py", label="example"))
    if not verdict.correct:
        raise SystemExit(f"the example is not correct here: {verdict.message}")
    medians = {"numba (example)": verdict.runtime.median, **{name: s.median for name, s in verdict.baselines}}
    return medians, verdict.method


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--repetitions", type=int, default=30, help="timed runs per contender (harness.repetitions)")
    parser.add_argument("--rounds", type=int, default=3, help="independent evaluations, each with a fresh Harness")
    args = parser.parse_args()
    facts = read_machine_facts()
    print(f"machine: {facts.model}, {facts.cpus} CPUs, {facts.simd.name}; torch {torch.__version__}, "
          f"numba {numba.__version__} ({numba.config.NUMBA_NUM_THREADS} threads)")
    base = Settings(cache_dir=Path(tempfile.gettempdir()) / "kforge-benchmark-cache")
    settings = dataclasses.replace(base, harness=dataclasses.replace(base.harness, repetitions=args.repetitions))
    rounds = []
    for i in range(args.rounds):
        load = os.getloadavg()[0]
        medians, method = one_round(settings)
        rounds.append(medians)
        print(f"round {i + 1}: " + ", ".join(f"{name} {ms:.3f} ms" for name, ms in medians.items())
              + f" (load average before: {load:.2f})")
    print(f"method: {method.warmup} warm-up + {method.repetitions} timed runs per contender; {method.notes}")
    print(f"{'contender':<18}{'median of round medians, ms':>30}")
    summary = {name: statistics.median(r[name] for r in rounds) for name in rounds[0]}
    for name, ms in summary.items():
        print(f"{name:<18}{ms:>30.3f}")
    ours = summary["numba (example)"]
    print(f"speedup of the example: {summary['eager'] / ours:.2f}x over eager, "
          f"{summary['compile'] / ours:.2f}x over torch.compile (ratios of medians)")


if __name__ == "__main__":
    main()
