"""How long a candidate that hangs takes to be classified ``timeout``, with the harness's default limits (the call's
limit follows the reference's time; builds keep their own, minutes-long limit, but an idle one is looked at every
call limit): a busy hang in forward, an idle hang at import and in ``__init__``; and how long a first call that
compiles (``torch.compile``) takes to pass, with the call limit set low (``--compile-call-limit``) so it runs past it.

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
IMPORT_HANG = '''
import time

while True:
    time.sleep(1)
'''
INIT_HANG = '''
import time

import torch


class ModelNew(torch.nn.Module):
    def __init__(self, *args):
        super().__init__()
        while True:
            time.sleep(1)

    def forward(self, *inputs):
        return inputs[0]
'''
COMPILES_AROUND = '''

_Correct = ModelNew


class ModelNew(_Correct):  # the correct candidate, whose first call compiles with torch.compile first
    def forward(self, *inputs):
        if not hasattr(self, "_compiled"):
            import torch

            def long_graph(t):  # hundreds of operators for Dynamo to trace: seconds of compiling
                for _ in range(300):
                    t = t.sin() + 1
                return t

            self._compiled = torch.compile(long_graph, backend="eager", dynamic=False)
            self._compiled(torch.ones(4))
        return super().forward(*inputs)
'''
HANGS = {"forward (busy)": HANG, "import (idle)": IMPORT_HANG, "__init__ (idle)": INIT_HANG}
GOAL_S = 60.0


def main() -> None:
    parser = arguments(__doc__.splitlines()[0])
    parser.add_argument("--rounds", type=int, default=3)
    parser.add_argument("--compile-call-limit", type=float, default=0.5,
                        help="harness.call_timeout_s for the compiling first call (below its compile time)")
    args = parser.parse_args()
    seconds: dict[str, list[float]] = {name: [] for name in HANGS}
    with scratch() as root:
        harness, correct = make_harness(args, Path(root), baselines=(), spare_workers=1)
        with harness:
            harness.evaluate(correct, measure=False)  # the worker and its spare are started
            timeouts = harness.timeouts
            for round_ in range(args.rounds):
                for name, source in HANGS.items():
                    start = time.monotonic()
                    verdict = harness.evaluate(Candidate.from_source(source, label=f"hang-{round_}"), measure=False)
                    seconds[name].append(time.monotonic() - start)
                    print(f"round {round_ + 1}, hang in {name}: "
                          f"{verdict.failure.value if verdict.failure else 'correct'} after {seconds[name][-1]:.1f} s: "
                          f"{verdict.message.splitlines()[0][:160]}")
        print(f"backend {harness.backend.name}: {timeouts.describe()}")
        compiled = _compiling_first_call(args, Path(root) / "compiling")
    for name, values in seconds.items():
        print(f"hang in {name}: classified after {statistics.median(values):.1f} s (median of {len(values)}; max "
              f"{max(values):.1f} s); goal <= {GOAL_S:.0f} s: {'met' if max(values) <= GOAL_S else 'NOT met'}")
    print(compiled)


def _compiling_first_call(args, root: Path) -> str:
    """A first call that compiles past a call limit of ``--compile-call-limit`` seconds: allowed, and noted."""
    harness, correct = make_harness(args, root, baselines=(), spare_workers=0, call_timeout_s=args.compile_call_limit)
    with harness:
        harness.evaluate(correct, measure=False)
        start = time.monotonic()
        compiles = Candidate.from_source(correct.source + COMPILES_AROUND, label="compiles")
        verdict = harness.evaluate(compiles, measure=False)
        took = time.monotonic() - start
    notes = [note for note in (verdict.verify.notes if verdict.verify else ()) if "past the call limit" in note]
    allowed = f"allowed ({notes[0]})" if notes else "NOT allowed past the call limit"
    return (f"compiling first call (call limit {args.compile_call_limit:g} s): {allowed}; verdict "
            f"{verdict.failure.value if verdict.failure else 'correct'} after {took:.1f} s: "
            f"{verdict.message.splitlines()[0][:200]}")


if __name__ == "__main__":
    main()
