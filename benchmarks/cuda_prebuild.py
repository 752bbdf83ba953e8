"""Building ahead on the GPU machine: several `cuda` candidates evaluated in one harness, with their builds started
ahead in child processes (`harness.prebuild_jobs` 4), going on while another candidate is timed or held apart from
the timed runs (`prebuild_during_timing`), against one after another (`prebuild_jobs` 0), side by side.

    python benchmarks/cuda_prebuild.py [--candidates 8] [--rounds 3]

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


MODES = {  # name: (prebuild_jobs, prebuild_during_timing)
    "one after another": (0, True),
    "built ahead (4 jobs)": (4, True),
    "built ahead, held in timing": (4, False),
}


def run_mode(mode: str, count: int, salt: str, root: Path) -> dict[str, object]:
    from kforge_cuda.backend import CUDA

    jobs, during_timing = MODES[mode]
    settings = Settings(harness=HarnessSettings(baselines=(), prebuild_jobs=jobs, spare_workers=1,
                                                prebuild_during_timing=during_timing),
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
    parser.add_argument("--rounds", type=int, default=3, help="each mode runs this many times, alternating")
    args = parser.parse_args()
    results: dict[str, list[dict[str, object]]] = {mode: [] for mode in MODES}
    with tempfile.TemporaryDirectory(prefix="kforge-bench-prebuild-") as tmp:
        for round_number in range(args.rounds):
            for number, mode in enumerate(MODES):
                results[mode].append(run_mode(mode, args.candidates, f"r{round_number}m{number}", Path(tmp)))
    print(f"{args.candidates} cuda candidates, each a cold nvcc build; {args.rounds} rounds per mode")
    print(f"{'mode':<30}{'wall (s)':>10}{'compile median (s)':>20}{'cache hits':>12}{'timed median (ms)':>19}  per round (ms)")
    walls, timed = {}, {}
    for mode, rows in results.items():
        walls[mode] = statistics.median(r["wall"] for r in rows)
        timed[mode] = statistics.median(m for r in rows for m in r["median_ms"])
        compile_s = statistics.median(s for r in rows for s in r["compile"])
        hits = statistics.median(r["cached"] for r in rows)
        print(f"{mode:<30}{walls[mode]:>10.2f}{compile_s:>20.3f}{hits:>12g}{timed[mode]:>19.4f}  "
              + " ".join(f"{statistics.median(r['median_ms']):.4f}" for r in rows))
    first = next(iter(MODES))
    for mode in list(MODES)[1:]:
        print(f"{mode}: wall time {walls[first] / walls[mode]:.2f}x faster than {first}; "
              f"timed medians ratio {timed[mode] / timed[first]:.3f}")

if __name__ == "__main__":
    main()
