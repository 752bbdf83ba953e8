"""How often the kernel index retrieves kernels of related problems: on KernelBench's level 1 and 2 problems, with
one published solution set as the store, the share of problems whose top-3 retrieved kernels share the problem's
main operator (its first GEMM, convolution or transposed convolution, else its first operator).

The store holds one kernel per problem of the solution set; each problem's own kernel is left out of its search
(leave-one-out), so a hit must come from another problem. The figure with the problem's own kernel allowed, and how
often that kernel is ranked first, are printed too.

    python benchmarks/retrieval_quality.py --kernelbench KERNELBENCH_CHECKOUT \\
        (--solutions-jsonl FILE | --solutions-dir DIR) [--backend cuda] [--levels 1 2]

``--solutions-jsonl``: one JSON object a line with ``level_id``, ``task_id`` and ``custom_code`` (and optionally
``score_default``, a speedup), as CUDA-L1 publishes its kernels. ``--solutions-dir``: ``levelN/<id>_<name>.py``
files, as KernelBench lays out its problems. Problems are read from ``KERNELBENCH_CHECKOUT/KernelBench/levelN``.
"""

from __future__ import annotations

import argparse
import json
import math
import re
import time
from collections import Counter
from pathlib import Path

from kforge_core.records import SourceFile
from kforge_core.retrieval import IndexedKernel, search, sketch_problem


def problems(checkout: Path, levels: list[int]) -> dict[tuple[int, int], Path]:
    found = {}
    for level in levels:
        for path in sorted((checkout / "KernelBench" / f"level{level}").glob("*.py")):
            match = re.match(r"(\d+)_", path.name)
            if match:
                found[(level, int(match.group(1)))] = path
    if not found:
        raise SystemExit(f"no problems under {checkout}/KernelBench/level{levels}")
    return found


def solutions(args: argparse.Namespace) -> dict[tuple[int, int], tuple[str, float | None]]:
    if args.solutions_jsonl:
        rows = [json.loads(line) for line in args.solutions_jsonl.read_text().splitlines() if line.strip()]
        return {(int(r["level_id"]), int(r["task_id"])): (r["custom_code"], r.get("score_default")) for r in rows
                if r.get("custom_code")}
    found = {}
    for path in sorted(args.solutions_dir.glob("level*/*.py")):
        match = re.match(r"(\d+)_", path.name)
        if match:
            found[(int(path.parent.name.removeprefix("level")), int(match.group(1)))] = (path.read_text(), None)
    return found


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--kernelbench", type=Path, required=True)
    source = parser.add_mutually_exclusive_group(required=True)
    source.add_argument("--solutions-jsonl", type=Path)
    source.add_argument("--solutions-dir", type=Path)
    parser.add_argument("--backend", default="cuda", help="the backend the solutions are written for")
    parser.add_argument("--levels", type=int, nargs="+", default=[1, 2])
    parser.add_argument("--top", type=int, default=3)
    args = parser.parse_args()

    started = time.perf_counter()
    problem_files = problems(args.kernelbench, args.levels)
    sketches = {key: sketch_problem(path) for key, path in problem_files.items()}
    sketched = time.perf_counter()
    kernels = {key: IndexedKernel(key=f"extra:{key}", problem=sketches[key], backend=args.backend, precision="",
                                  verdict="published", files=(SourceFile("solution.py", code),), entry="solution.py",
                                  speedup=speedup)
               for key, (code, speedup) in solutions(args).items() if key in sketches}
    everything = list(kernels.values())

    shared_loo = shared_with_self = self_first = no_main = 0
    chance = 0.0  # the expected share for args.top kernels drawn at random from the others
    misses: Counter[str] = Counter()
    for key, sketch in sketches.items():
        main_op = sketch.main_operator
        if main_op is None:
            no_main += 1
            continue
        others = [k for k in everything if k.key != f"extra:{key}"]
        sharing = sum(main_op in (*k.problem.operators, *k.problem.traced) for k in others)
        chance += 1 - math.comb(len(others) - sharing, args.top) / math.comb(len(others), args.top)
        top = search(others, sketch, backend=args.backend, limit=args.top)
        if any(main_op in (*h.kernel.problem.operators, *h.kernel.problem.traced) for h in top):
            shared_loo += 1
        else:
            misses[main_op] += 1
        top_all = search(everything, sketch, backend=args.backend, limit=args.top)
        shared_with_self += any(main_op in (*h.kernel.problem.operators, *h.kernel.problem.traced) for h in top_all)
        self_first += bool(top_all) and top_all[0].kernel.key == f"extra:{key}"
    searched = time.perf_counter()

    asked = len(sketches) - no_main
    traced = sum(bool(s.traced) for s in sketches.values())
    print(f"problems: {len(sketches)} (levels {args.levels}), {traced} traced on the meta device, "
          f"{no_main} without an operator")
    print(f"store: {len(kernels)} {args.backend} kernels from the solution set")
    print(f"top-{args.top} shares the main operator, own kernel left out: {shared_loo}/{asked} = "
          f"{shared_loo / asked:.1%} (by chance: {chance / asked:.1%})")
    print(f"top-{args.top} shares the main operator, own kernel allowed: {shared_with_self}/{asked} = "
          f"{shared_with_self / asked:.1%}; own kernel ranked first: {self_first}/{len(kernels)}")
    print("misses by main operator: " + (", ".join(f"{op} {n}" for op, n in misses.most_common()) or "none"))
    print(f"time: {sketched - started:.1f} s to describe the problems, {searched - sketched:.1f} s for "
          f"{2 * asked} searches")


if __name__ == "__main__":
    main()
