"""How long a bench's first problem waits for its description: handed to the describer's child process (which
starts an interpreter and imports torch first), against described in the KForge process, which has imported torch
already (``ProblemLoader.ahead(..., here=1)``). Each way in a fresh process of its own, one after the other, for
the first problem of SUITE (the first a bench of it takes, ``bench.suite.discover``); the medians of ``--rounds``
rounds.

    python benchmarks/first_description.py SUITE [--rounds 3]
"""

from __future__ import annotations

import argparse
import statistics
import subprocess
import sys
from pathlib import Path

from kforge_core.bench.suite import discover

ONE_WAY = r'''
import sys, time
from pathlib import Path

def main():
    way, path = sys.argv[1], Path(sys.argv[2])
    import torch  # the KForge process of a bench has imported it before its first problem is asked for
    from kforge_core.bench.describer import Describer
    from kforge_core.bench.slot import ProblemLoader
    loader = ProblemLoader(Describer())
    start = time.perf_counter()
    loader.ahead([path], here=1 if way == "here" else 0)
    loader.load(path)
    print(f"{time.perf_counter() - start:.3f}")
    loader.close()

if __name__ == "__main__":
    main()
'''


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("suite", type=Path)
    parser.add_argument("--rounds", type=int, default=3)
    args = parser.parse_args()
    first = discover(args.suite)[0].path
    seconds: dict[str, list[float]] = {"child": [], "here": []}
    for _ in range(args.rounds):
        for way in seconds:
            out = subprocess.run([sys.executable, "-c", ONE_WAY, way, str(first)], capture_output=True, text=True,
                                 check=True).stdout
            seconds[way].append(float(out.strip().splitlines()[-1]))
    print(f"{first.name}: the first problem's description waited for, median of {args.rounds}")
    for way, values in seconds.items():
        where = "in the describer's child" if way == "child" else "in the KForge process"
        print(f"  {where:<26} {statistics.median(values):.2f} s  ({', '.join(f'{v:.2f}' for v in values)})")


if __name__ == "__main__":
    main()
