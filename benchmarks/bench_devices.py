"""``kforge bench`` of one suite on one device against the same bench on several devices of one host: wall times,
the speedup, and whether the verdicts agree.

    python benchmarks/bench_devices.py SUITE --solutions DIR --backend cuda --devices 0,1
    python benchmarks/bench_devices.py problems/ --solutions solutions/ --backend cuda --devices 0,1 \\
        --kforge-args '--build-jobs 16' --json figures.json

Each bench starts from an empty cache directory of its own (baselines, builds, compiled graphs: none is shared) and
an empty runs directory, in a process of its own. Printed: each bench's wall time (the command's start to its end,
process start included) and the bench's own (``wall_seconds`` of its document), problems per minute, the speedup of
the wide bench, and each problem whose verdict (correct, or its failure class) differs between the two. A
published solution set laid out by ``benchmarks/solution_set.py`` makes a suite of any size (the measure the issue
asks for: >= 60 level-1 and level-2 solutions).
"""

from __future__ import annotations

import argparse
import json
import os
import shlex
import subprocess
import sys
import tempfile
import time
from pathlib import Path


def kforge(*args: str) -> list[str]:
    return [sys.executable, "-c", "from kforge_core.cli import main; main()", *args]


def bench(suite: Path, solutions: Path, backend: str, devices: str, extra: list[str]) -> dict:
    """One bench in fresh directories: its wall time, its document, its verdicts by problem."""
    with tempfile.TemporaryDirectory(prefix="kforge-bench-devices-") as scratch:
        env = {**os.environ, "KFORGE_CACHE_DIR": str(Path(scratch) / "cache")}
        command = kforge("bench", str(suite), "--solutions", str(solutions), "--backend", backend, "--devices",
                         devices, "--runs-dir", str(Path(scratch) / "runs"), "--json", *extra)
        start = time.perf_counter()
        done = subprocess.run(command, env=env, capture_output=True, text=True)
        wall = time.perf_counter() - start
    if done.returncode != 0:
        sys.exit(f"kforge bench --devices {devices} failed ({done.returncode}):\n{done.stderr[-4000:]}")
    document = json.loads(done.stdout)
    verdicts = {p["problem"]: "correct" if p["correct"] else (p["failure"] or "failed") for p in document["problems"]}
    return {"devices": devices, "wall_s": wall, "bench_wall_s": document["summary"]["wall_seconds"],
            "problems": len(verdicts), "verdicts": verdicts, "correct": sum(v == "correct" for v in verdicts.values())}


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("suite", type=Path)
    parser.add_argument("--solutions", type=Path, required=True)
    parser.add_argument("--backend", default="cuda")
    parser.add_argument("--devices", default="0,1",
                        help="the devices of the wide bench (the narrow one uses the first)")
    parser.add_argument("--kforge-args", default="", help="more arguments for both benches, as one string")
    parser.add_argument("--json", type=Path, help="write every figure here")
    args = parser.parse_args()
    extra = shlex.split(args.kforge_args)
    one = args.devices.split(",")[0]
    narrow = bench(args.suite, args.solutions, args.backend, one, extra)
    wide = bench(args.suite, args.solutions, args.backend, args.devices, extra)
    for run in (narrow, wide):
        print(f"--devices {run['devices']:<8} {run['problems']} problems, {run['correct']} correct: "
              f"{run['wall_s']:.1f} s wall ({run['bench_wall_s']:.1f} s in the bench), "
              f"{60 * run['problems'] / run['wall_s']:.1f} problems/min")
    print(f"speedup of --devices {args.devices}: {narrow['wall_s'] / wide['wall_s']:.2f}x wall, "
          f"{narrow['bench_wall_s'] / wide['bench_wall_s']:.2f}x in the bench")
    differ = {k: (narrow["verdicts"].get(k), wide["verdicts"].get(k))
              for k in sorted(set(narrow["verdicts"]) | set(wide["verdicts"]))
              if narrow["verdicts"].get(k) != wide["verdicts"].get(k)}
    print("verdicts: " + ("all agree" if not differ else f"{len(differ)} differ"))
    for key, (a, b) in differ.items():
        print(f"  {key}: {a} on one device, {b} on {args.devices}")
    if args.json:
        args.json.write_text(json.dumps({"narrow": narrow, "wide": wide, "differ": differ}, indent=2))


if __name__ == "__main__":
    main()
