"""Building ahead on the GPU machine: several `cuda` candidates evaluated in one harness, with their builds started
ahead in child processes (`harness.prebuild_jobs` 4) against one after another (`prebuild_jobs` 0), side by side.

    python benchmarks/cuda_prebuild.py [--candidates 8] [--rounds 2]

Each candidate is the shipped softmax example with a different comment in its CUDA source, so every one needs a
cold nvcc build (each mode starts from an empty build cache). Printed per mode: the wall time from the first
candidate to the last verdict (the worker's start excluded: it is made before the clock starts), the compile
stage's seconds per candidate (a build found ahead is a cache hit), and the candidates' timed medians, to show
whether builds running beside the timed runs disturbed them.
"""

from __future__ import annotations

import argparse
import statistics
import tempfile
import time
from pathlib import Path

from kforge_core.harness import Harness
from kforge_core.plugins import PluginSelection
from kforge_core.problem import load_problem
from kforge_core.records import Candidate
from kforge_core.settings import HarnessSettings, Settings

ROOT = Path(__file__).resolve().parents[1]
EXAMPLES = ROOT / "plugins/kforge_cuda/kforge_cuda/examples"
SOLUTION = (EXAMPLES / "cuda_solution.py").read_text()
MARK = "#include <cuda_runtime.h>"


def variants(count: int, salt: str) -> list[Candidate]:
    assert MARK in SOLUTION
    return [Candidate.from_source(SOLUTION.replace(MARK, f"// variant {salt}-{i}\n{MARK}", 1), label=f"v{i}")
            for i in range(count)]


def run_mode(jobs: int, count: int, salt: str, root: Path) -> dict[str, object]:
    from kforge_cuda.backends import CUDA

    settings = Settings(harness=HarnessSettings(baselines=(), prebuild_jobs=jobs, spare_workers=1),
                        cache_dir=root / f"cache-{salt}")
    problem = load_problem(EXAMPLES / "cuda_problem.py")
    with Harness(backend=CUDA, problem=problem, settings=settings,
                 plugins=PluginSelection(entry_points=False, modules=("kforge_cuda",))) as harness:
        harness.evaluate(Candidate.from_source(SOLUTION, label="start-up"))  # the worker's start, not timed
        candidates = variants(count, salt)
        start = time.perf_counter()
        verdicts = list(harness.evaluate_all(candidates))
        wall = time.perf_counter() - start
    wrong = [v.message for v in verdicts if not v.correct]
    if wrong:
        raise SystemExit(f"a candidate was not correct: {wrong[0]}")
    return {"wall": wall, "compile": [v.compile.seconds for v in verdicts],
            "cached": sum(v.compile.cached for v in verdicts),
            "median_ms": [v.runtime.median for v in verdicts]}


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--candidates", type=int, default=8)
    parser.add_argument("--rounds", type=int, default=2, help="each mode runs this many times, alternating")
    args = parser.parse_args()
    results: dict[int, list[dict[str, object]]] = {0: [], 4: []}
    with tempfile.TemporaryDirectory(prefix="kforge-bench-prebuild-") as tmp:
        for round_number in range(args.rounds):
            for jobs in (0, 4):
                results[jobs].append(run_mode(jobs, args.candidates, f"r{round_number}j{jobs}", Path(tmp)))
    print(f"{args.candidates} cuda candidates, each a cold nvcc build; {args.rounds} rounds per mode")
    print(f"{'mode':<28}{'wall (s)':>10}{'compile median (s)':>20}{'cache hits':>12}{'timed median (ms)':>19}")
    for jobs, rows in results.items():
        mode = "one after another" if jobs == 0 else f"built ahead ({jobs} jobs)"
        wall = statistics.median(r["wall"] for r in rows)
        compile_s = statistics.median(s for r in rows for s in r["compile"])
        hits = statistics.median(r["cached"] for r in rows)
        timed = statistics.median(m for r in rows for m in r["median_ms"])
        print(f"{mode:<28}{wall:>10.2f}{compile_s:>20.3f}{hits:>12g}{timed:>19.4f}")
    sequential = statistics.median(r["wall"] for r in results[0])
    ahead = statistics.median(r["wall"] for r in results[4])
    seq_timed = statistics.median(m for r in results[0] for m in r["median_ms"])
    ahead_timed = statistics.median(m for r in results[4] for m in r["median_ms"])
    print(f"wall time ratio (one after another / built ahead): {sequential / ahead:.2f}x; "
          f"timed medians ratio (built ahead / one after another): {ahead_timed / seq_timed:.3f}")


if __name__ == "__main__":
    main()
