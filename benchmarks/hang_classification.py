"""How long a candidate whose forward never returns takes to be classified ``timeout``, with the harness's default
limits (the call's limit follows the reference's time; builds keep their own, minutes-long limit).

The clock runs from ``Harness.evaluate`` to its verdict, the worker already started (as for every candidate but a
run's first). Goal: well within 60 s on a millisecond-scale problem, on every backend.

    python benchmarks/hang_classification.py --backend cpu     # the Numba backend: the hang is in its compile stage
    python benchmarks/hang_classification.py                   # the core's generic stages: the hang is in verify
    python benchmarks/hang_classification.py --device cuda
"""

from __future__ import annotations

import statistics
import time
from pathlib import Path

from harness_common import arguments, make_harness, scratch

from kforge_core.records import Candidate

HANG = '''
import torch


class ModelNew(torch.nn.Module):
    def __init__(self, *args):
        super().__init__()

    def forward(self, *inputs):
        while True:
            pass
'''
GOAL_S = 60.0


def main() -> None:
    parser = arguments(__doc__.splitlines()[0])
    parser.add_argument("--rounds", type=int, default=3)
    args = parser.parse_args()
    with scratch() as root:
        harness, correct = make_harness(args, Path(root), baselines=(), spare_workers=1)
        with harness:
            harness.evaluate(correct, measure=False)  # the worker and its spare are started
            timeouts = harness.timeouts
            seconds = []
            for round_ in range(args.rounds):
                start = time.monotonic()
                verdict = harness.evaluate(Candidate.from_source(HANG, label=f"hang-{round_}"), measure=False)
                seconds.append(time.monotonic() - start)
                print(f"round {round_ + 1}: {verdict.failure.value if verdict.failure else 'correct'} after "
                      f"{seconds[-1]:.1f} s: {verdict.message.splitlines()[0]}")
    print(f"backend {harness.backend.name}: {timeouts.describe()}")
    median = statistics.median(seconds)
    print(f"classified after {median:.1f} s (median of {len(seconds)}; max {max(seconds):.1f} s); goal "
          f"<= {GOAL_S:.0f} s: {'met' if max(seconds) <= GOAL_S else 'NOT met'}")


if __name__ == "__main__":
    main()
