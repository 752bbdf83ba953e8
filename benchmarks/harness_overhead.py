"""What the harness itself costs per candidate, beyond compiling it and running its kernel: with a new worker
per candidate (cold) and with a warm worker kept for the next one (warm).

overhead = wall time of Harness.evaluate - compile seconds - median x (calls of forward: trials, the operator
trace, warm-up, timed runs). Baselines are measured before and are not part of it.

    python benchmarks/harness_overhead.py                  # CPU
    python benchmarks/harness_overhead.py --device cuda    # GPU (goal: warm overhead <= 0.5 s)
"""

from __future__ import annotations

import dataclasses
import statistics
import time
from pathlib import Path

from harness_common import arguments, make_harness, scratch

GOAL_WARM_S = 0.5


def measure(args, root: Path, warm: bool) -> list[dict[str, float]]:
    harness, candidate = make_harness(args, root / ("warm" if warm else "cold"), warm_workers=warm,
                                      spare_workers=0, baselines=())
    rows = []
    with harness:
        for i in range(args.candidates + (1 if warm else 0)):  # warm: the first one starts the worker
            start = time.perf_counter()
            verdict = harness.evaluate(dataclasses.replace(candidate, label=f"{candidate.label}-{i}"))
            wall = time.perf_counter() - start
            if not verdict.correct:
                raise SystemExit(f"the candidate was not correct: {verdict.message}")
            calls = args.trials + 1 + args.warmup + args.repetitions
            kernel = verdict.runtime.median / 1e3 * calls
            rows.append({"wall": wall, "compile": verdict.compile.seconds, "kernel": kernel,
                         "overhead": wall - verdict.compile.seconds - kernel, "replaced": verdict.worker_replaced})
    return rows[1:] if warm else rows


def main() -> None:
    parser = arguments(__doc__.splitlines()[0])
    parser.add_argument("--candidates", type=int, default=5, help="candidates evaluated per mode")
    args = parser.parse_args()
    with scratch() as root:
        results = {mode: measure(args, Path(root), mode == "warm") for mode in ("cold", "warm")}
    print(f"harness overhead per candidate ({args.problem}, device {args.backend or args.device}, {args.trials} "
          f"trials, {args.warmup} + {args.repetitions} runs; medians over {args.candidates} candidates)")
    print(f"  {'':6}{'wall s':>10}{'compile s':>11}{'kernel s':>10}{'overhead s':>12}")
    for mode, rows in results.items():
        med = {key: statistics.median(row[key] for row in rows) for key in ("wall", "compile", "kernel", "overhead")}
        print(f"  {mode:6}{med['wall']:>10.3f}{med['compile']:>11.3f}{med['kernel']:>10.3f}{med['overhead']:>12.3f}")
    cold = statistics.median(r["overhead"] for r in results["cold"])
    warm = statistics.median(r["overhead"] for r in results["warm"])
    print(f"  warm / cold overhead: {warm / cold:.2f}; goal on the GPU machine: warm <= {GOAL_WARM_S} s "
          f"(measured {warm:.3f} s)")


if __name__ == "__main__":
    main()
