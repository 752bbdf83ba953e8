"""What the outside checks cost an evaluation: this tree beside an earlier revision, in the same call, in turns.

The outside checks are the KForge process's own clock around every timed call (a mark it answers before the worker's
clock starts), a copy of every timed call's outputs made before the call's mark ends (baselines' too), and every
timed call's outputs checked by the referee. Each side evaluates the same candidate with a warm worker, baselines
beside it, in a child process of its own whose imports come from that side's tree; the sides take turns, so a slow
phase of the machine falls on both. Prints each side's median evaluation and timing phase, and the ratios.

    python benchmarks/outside_checks_cost.py --against REV                   # CPU
    python benchmarks/outside_checks_cost.py --against REV --device cuda     # GPU
    python benchmarks/outside_checks_cost.py --against DIR                   # an earlier tree laid out in DIR
"""

from __future__ import annotations

import argparse
import dataclasses
import json
import os
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

HERE = Path(__file__).resolve().parent
TREE = HERE.parent


def child(args: argparse.Namespace) -> None:
    """Evaluate in this process's tree; one JSON line per evaluation (the first, which starts workers, left out)."""
    from harness_common import make_harness

    with tempfile.TemporaryDirectory(prefix="kforge-cost-") as root:
        harness, candidate = make_harness(args, Path(root), baselines=("eager",), spare_workers=0)
        with harness:
            for i in range(args.candidates + 1):
                start = time.perf_counter()
                verdict = harness.evaluate(dataclasses.replace(candidate, label=f"{candidate.label}-{i}"))
                wall = time.perf_counter() - start
                if not verdict.correct:
                    raise SystemExit(f"the candidate was not correct: {verdict.message}")
                if i:
                    print(json.dumps({"wall": wall, **dict(verdict.phases)}), flush=True)


def side_environment(tree: Path) -> dict[str, str]:
    paths = [str(tree), str(tree / "benchmarks"), *(str(p) for p in sorted((tree / "plugins").glob("kforge_*")))]
    return {**os.environ, "PYTHONPATH": os.pathsep.join(paths)}


def run_side(tree: Path, args: argparse.Namespace) -> list[dict[str, float]]:
    command = [sys.executable, str(tree / "benchmarks" / "outside_checks_cost.py"), "--child",
               "--device", args.device, "--problem", args.problem, "--candidates", str(args.candidates),
               "--repetitions", str(args.repetitions)] + (["--size", str(args.size)] if args.size else [])
    if not (tree / "benchmarks" / "outside_checks_cost.py").exists():  # the earlier tree has no such script
        command[1] = str(HERE / "outside_checks_cost.py")
    done = subprocess.run(command, cwd=tree, env=side_environment(tree), capture_output=True, text=True)
    if done.returncode:
        raise SystemExit(f"{tree}: {done.stderr[-3000:]}")
    return [json.loads(line) for line in done.stdout.splitlines() if line.startswith("{")]


def main() -> None:
    from harness_common import arguments

    parser = arguments(__doc__.splitlines()[0])
    parser.add_argument("--against", help="the revision to compare with (checked out into a temporary worktree)")
    parser.add_argument("--candidates", type=int, default=4, help="evaluations per turn (after a first, not counted)")
    parser.add_argument("--turns", type=int, default=3, help="turns of each side")
    parser.add_argument("--child", action="store_true", help=argparse.SUPPRESS)
    args = parser.parse_args()
    if args.child:
        child(args)
        return
    if not args.against:
        parser.error("--against REV (or a directory holding an earlier tree) is needed")
    with tempfile.TemporaryDirectory(prefix="kforge-against-") as place:
        earlier = Path(args.against).resolve()
        made = not earlier.is_dir()  # a revision: checked out for the comparison, removed after
        if made:
            earlier = Path(place) / "tree"
            subprocess.run(["git", "-C", str(TREE), "worktree", "add", "--detach", str(earlier), args.against],
                           check=True, capture_output=True)
        try:
            rows: dict[str, list[dict[str, float]]] = {"this tree": [], args.against: []}
            for turn in range(args.turns):
                for name, tree in (("this tree", TREE), (args.against, earlier)):
                    rows[name].extend(run_side(tree, args))
                    print(f"turn {turn + 1}: {name} done", file=sys.stderr)
        finally:
            if made:
                subprocess.run(["git", "-C", str(TREE), "worktree", "remove", "--force", str(earlier)],
                               capture_output=True)
    report(rows, args)


def report(rows: dict[str, list[dict[str, float]]], args: argparse.Namespace) -> None:
    print(f"{args.device}, {args.problem}, {args.repetitions} timed runs, eager beside it, "
          f"{args.candidates} x {args.turns} evaluations a side (medians, seconds)")
    print(f"{'side':<24} {'evaluation':>11} {'timing':>9} {'verify':>9}")
    medians = {}
    for name, found in rows.items():
        medians[name] = {key: statistics.median(row.get(key, 0.0) for row in found)
                         for key in ("wall", "timing", "verify")}
        m = medians[name]
        print(f"{name:<24} {m['wall']:>11.3f} {m['timing']:>9.3f} {m['verify']:>9.3f}")
    new, old = medians["this tree"], medians[args.against]
    print(f"evaluation: {new['wall'] / old['wall']:.3f}x ({new['wall'] - old['wall']:+.3f} s); "
          f"timing phase: {new['timing'] / old['timing']:.3f}x ({new['timing'] - old['timing']:+.3f} s)")
    print(json.dumps({"medians": medians, "rows": rows}))


if __name__ == "__main__":
    sys.path.insert(0, str(HERE))
    main()
