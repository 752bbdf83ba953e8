"""Seconds per problem for a suite: one `kforge eval` per problem (each a cold start: workers, torch, the device,
the baselines), against one `kforge bench` for all of them (warm workers from one problem to the next), and a
second `kforge bench` that reads its baselines from the baseline cache.

    python benchmarks/bench_suite.py --backend cuda --problems 30                  # the GPU machine
    python benchmarks/bench_suite.py --backend cpu --problems 8 --solutions numba  # the CPU, a few problems

The suite is examples/suites/basics (32 problems) unless --suite says otherwise; --solutions is `torch` (plain
PyTorch, any backend: run under --policy report, as its reference_call flags would otherwise block it), `numba`
(the cpu backend) or a directory. Every mode starts from an empty cache directory of its own (the second bench
shares the first's), so no mode finds the baselines, builds or compiled graphs of another. Printed per round: each
mode's wall time (the command's start to its end, process start included), seconds per problem amortised, and
whether its verdicts agree with the first mode's; then the medians over the rounds. `--json` adds every figure.
"""

from __future__ import annotations

import argparse
import json
import os
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

from kforge_core.bench.suite import discover

ROOT = Path(__file__).resolve().parents[1]
SUITE = ROOT / "examples" / "suites" / "basics"


def kforge(*args: str) -> list[str]:
    return [sys.executable, "-c", "from kforge_core.cli import main; main()", *args]


def run(command: list[str], env: dict[str, str]) -> tuple[float, subprocess.CompletedProcess]:
    start = time.perf_counter()
    done = subprocess.run(command, env=env, capture_output=True, text=True)
    return time.perf_counter() - start, done


def evaluate_one_by_one(problems, solutions: Path, flags: list[str], env: dict[str, str]) -> tuple[float, dict]:
    """One `kforge eval` per problem; the verdict of each (correct or its failure class)."""
    verdicts, total = {}, 0.0
    for problem in problems:
        solution = solutions / f"{problem.key}.py"
        seconds, done = run(kforge("eval", str(problem.path), str(solution), "--json", *flags), env)
        total += seconds
        if done.returncode not in (0, 3):
            raise SystemExit(f"kforge eval failed on {problem.key}:\n{done.stderr[-2000:]}")
        document = json.loads(done.stdout)
        verdicts[problem.key] = document["failure"] or "correct"
    return total, verdicts


def evaluate_as_a_bench(suite: Path, problems, solutions: Path, flags: list[str], env: dict[str, str],
                        runs_dir: Path) -> tuple[float, dict, dict]:
    filters = [arg for p in problems for arg in ("--filter", p.key)]
    seconds, done = run(kforge("bench", str(suite), "--solutions", str(solutions), "--runs-dir", str(runs_dir),
                               "--json", *filters, *flags), env)
    if done.returncode != 0:
        raise SystemExit(f"kforge bench failed:\n{done.stderr[-2000:]}")
    document = json.loads(done.stdout)
    return seconds, {p["problem"]: p["failure"] or "correct" for p in document["problems"]}, document["summary"]


def one_round(args: argparse.Namespace, problems, solutions: Path, flags: list[str], scratch: Path) -> dict:
    base = {**os.environ, "KFORGE_HARNESS__BASELINES": json.dumps(args.baselines.split(","))}
    eval_env = {**base, "KFORGE_CACHE_DIR": str(scratch / "cache-eval")}
    bench_env = {**base, "KFORGE_CACHE_DIR": str(scratch / "cache-bench")}
    suite = args.suite / "problems"
    figures = {}
    seconds, reference = evaluate_one_by_one(problems, solutions, flags, eval_env)
    figures["kforge eval per problem"] = {"seconds": seconds, "agree": True}
    for mode in ("kforge bench", "kforge bench, cached baselines"):
        seconds, verdicts, summary = evaluate_as_a_bench(suite, problems, solutions, flags, bench_env,
                                                         scratch / "runs")
        figures[mode] = {"seconds": seconds, "agree": verdicts == reference, "fast_p": summary["fast_p"],
                         "correct": summary["correct"], "geomean_speedup": summary["geomean_speedup"]}
    figures["verdicts"] = reference
    return figures


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--backend", default="cpu")
    parser.add_argument("--suite", type=Path, default=SUITE, help="a directory with problems/ and solutions/")
    parser.add_argument("--solutions", default="torch", help="torch, numba, or a directory mirroring problems/")
    parser.add_argument("--problems", type=int, default=30, help="how many of the suite's problems (in its order)")
    parser.add_argument("--baselines", default="eager", help="eager, or eager,compile")
    parser.add_argument("--rounds", type=int, default=1)
    parser.add_argument("--json", action="store_true", help="print every figure as JSON at the end")
    parser.add_argument("flags", nargs="*", help="more flags for both commands (after --), e.g. --trials 3")
    args = parser.parse_args()
    solutions = Path(args.solutions) if "/" in args.solutions else args.suite / "solutions" / args.solutions
    policy = ["--policy", "report"] if solutions.name == "torch" else []
    flags = ["--backend", args.backend, *policy, *args.flags]
    problems = discover(args.suite / "problems")[: args.problems]
    print(f"{len(problems)} problems of {args.suite}, solutions {solutions}, backend {args.backend}, baselines "
          f"{args.baselines}; load average {os.getloadavg()[0]:.1f} on {os.cpu_count()} CPUs", flush=True)
    rounds = []
    for number in range(1, args.rounds + 1):
        with tempfile.TemporaryDirectory(prefix="kforge-bench-suite-") as scratch:
            figures = one_round(args, problems, solutions, flags, Path(scratch))
        rounds.append(figures)
        for mode, f in figures.items():
            if mode != "verdicts":
                print(f"round {number}: {mode}: {f['seconds']:.1f} s, {f['seconds'] / len(problems):.2f} s per "
                      f"problem{'' if f['agree'] else ' (VERDICTS DIFFER from kforge eval)'}", flush=True)
    print(f"median of {len(rounds)} round(s), seconds per problem amortised over {len(problems)} problems:")
    for mode in (m for m in rounds[0] if m != "verdicts"):
        per_problem = statistics.median(r[mode]["seconds"] / len(problems) for r in rounds)
        print(f"  {mode:32s} {per_problem:7.2f} s")
    correct = sum(v == "correct" for v in rounds[0]["verdicts"].values())
    print(f"correct: {correct} of {len(problems)}; verdicts the same in every mode and round: "
          f"{all(r[m]['agree'] for r in rounds for m in r if m != 'verdicts')}")
    if args.json:
        print(json.dumps({"problems": [p.key for p in problems], "rounds": rounds}, indent=2))


if __name__ == "__main__":
    main()
