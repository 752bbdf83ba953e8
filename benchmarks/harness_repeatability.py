"""How repeatable the harness's headline number is: the same candidate evaluated again and again, each time
with its warm-up and timed runs, and the coefficient of variation (CV) of the medians it reports.

    python benchmarks/harness_repeatability.py                     # CPU, 1024 x 1024 elementwise
    python benchmarks/harness_repeatability.py --device cuda       # GPU, 8192 x 8192 elementwise (goal: CV <= 1%)
    python benchmarks/harness_repeatability.py --device cuda --problem gemm
"""

from __future__ import annotations

import dataclasses
import statistics
import time
from pathlib import Path

from harness_common import arguments, make_harness, scratch

GOAL_CV = 0.01


def main() -> None:
    parser = arguments(__doc__.splitlines()[0])
    parser.add_argument("--evaluations", type=int, default=10, help="evaluations of the same candidate")
    args = parser.parse_args()
    with scratch() as root:
        harness, candidate = make_harness(args, Path(root), baselines=("eager",))
        with harness:
            eager = harness.baselines()["eager"]
            medians, within = [], []
            start = time.perf_counter()
            for i in range(args.evaluations):
                verdict = harness.evaluate(dataclasses.replace(candidate, label=f"{candidate.label}-{i}"))
                if not verdict.correct:
                    raise SystemExit(f"the candidate was not correct: {verdict.message}")
                medians.append(verdict.runtime.median)
                within.append(verdict.runtime.cv)
            elapsed = time.perf_counter() - start
            method = verdict.method
    mean = statistics.fmean(medians)
    cv = statistics.stdev(medians) / mean if len(medians) > 1 else 0.0
    print(f"harness repeatability: {candidate.label} on {method.device} ({harness.backend.name}), "
          f"{args.evaluations} evaluations x ({method.warmup} warm-up + {method.repetitions} timed runs), "
          f"L2 flush {method.l2_flush_bytes:,} bytes, {elapsed:.1f} s")
    print(f"  medians (ms): {', '.join(f'{m:.4f}' for m in medians)}")
    print(f"  {'':34}{'value':>12}{'compare with':>16}")
    print(f"  {'median of the medians (ms)':34}{statistics.median(medians):>12.4f}"
          f"{eager.median:>14.4f}  (eager, once)")
    print(f"  {'CV of the medians':34}{cv:>11.2%}{GOAL_CV:>15.0%}  (goal on the GPU machine, kernels >= 100 us)")
    print(f"  {'mean CV within one evaluation':34}{statistics.fmean(within):>11.2%}")
    print(f"  {'max/min of the medians':34}{max(medians) / min(medians):>12.3f}")


if __name__ == "__main__":
    main()
