"""The harness's own bias: each problem's reference given as its own candidate must come out at 1.00x, on every timer.

A candidate and its baselines run in different worker processes; anything that makes the candidate's process slower
per call (what it does for safety, its allocator or library state) shows here as a speedup below 1 for code that is
the same on both sides. Runs ``kforge bench SUITE --solutions COPIES`` where COPIES holds each problem's own file (the
candidate falls back to ``Model``), with ``--policy report`` (the reference calls PyTorch, which the strict policy
rejects), and prints each problem's speedup against eager by every timer, then per timer the median, the worst and
how many fall outside ``--band`` (default ±3%).

    python benchmarks/self_speedup.py examples/suites/basics/problems --backend cpu
    python benchmarks/self_speedup.py KernelBench/KernelBench/level3 --backend cuda --json out.json --timer events
"""

from __future__ import annotations

import argparse
import json
import os
import shutil
import statistics
import subprocess
import sys
import tempfile
from pathlib import Path

from kforge_core.harness.worker.run_timing import LAUNCH_PAST_HOLD


def copies_as_solutions(suite: Path, into: Path) -> int:
    """Each problem file of ``suite`` copied under the same relative path: its own solution."""
    count = 0
    for path in sorted(suite.rglob("*.py")):
        if path.name.startswith("_"):
            continue
        target = into / path.relative_to(suite)
        target.parent.mkdir(parents=True, exist_ok=True)
        shutil.copyfile(path, target)
        count += 1
    return count


def speedups(bench: dict) -> tuple[dict[str, dict[str, float]], dict[str, dict[str, float]], set[str],
                                   dict[str, int]]:
    """For the problems that came out correct (each verdict read from the file the bench wrote it to): problem ->
    timer -> speedup against eager; problem -> timer -> the candidate's median milliseconds; the problems whose
    launch outlasted the hold before an events call (their events figure counts the host's launch); and problem ->
    the device streams its runs involved, where more than the caller's (no hold is made before their events
    calls)."""
    found, figures, past_hold, streams = {}, {}, set(), {}
    for problem in bench["problems"]:
        if not problem.get("correct") or not problem.get("verdict_file"):
            continue
        verdict = json.loads(Path(problem["verdict_file"]).read_text())
        by_timer = {timer: ratios["eager"] for timer, ratios in verdict.get("speedups_by_timer", {}).items()
                    if "eager" in ratios}
        if by_timer:
            found[problem["problem"]] = by_timer
            figures[problem["problem"]] = {timer: stats["median"]
                                           for timer, stats in verdict.get("figures", {}).items()}
            if LAUNCH_PAST_HOLD in ((verdict.get("method") or {}).get("notes") or ""):
                past_hold.add(problem["problem"])
            if verdict.get("device_streams", 0) > 1:
                streams[problem["problem"]] = verdict["device_streams"]
    return found, figures, past_hold, streams


def summary(found: dict[str, dict[str, float]], band: float) -> dict[str, dict[str, float]]:
    timers = sorted({timer for by_timer in found.values() for timer in by_timer})
    table = {}
    for timer in timers:
        values = [by_timer[timer] for by_timer in found.values() if timer in by_timer]
        worst = max(values, key=lambda v: abs(v - 1.0))
        table[timer] = {"problems": len(values), "median": statistics.median(values), "worst": worst,
                        "outside_band": sum(abs(v - 1.0) > band for v in values)}
    return table


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("suite", type=Path)
    parser.add_argument("--backend", required=True)
    parser.add_argument("--band", type=float, default=0.03, help="the relative band around 1.00x (default 0.03)")
    parser.add_argument("--json", type=Path, help="write the problems' speedups and the summary here")
    args, bench_args = parser.parse_known_args()  # what it does not know goes to kforge bench (--timer, --filter)
    with tempfile.TemporaryDirectory(prefix="kforge-self-") as place:
        solutions = Path(place) / "solutions"
        count = copies_as_solutions(args.suite, solutions)
        command = [sys.executable, "-m", "kforge_core", "bench", str(args.suite), "--backend", args.backend,
                   "--solutions", str(solutions), "--policy", "report", "--baselines", "eager", "--json",
                   "--runs-dir", str(Path(place) / "runs"), *bench_args]
        print(f"{count} problems, each its own candidate: {' '.join(command)}", file=sys.stderr)
        # every timer is compared, long calls' too (harness.beside_timers; the environment's own choice stands)
        env = {"KFORGE_HARNESS__BESIDE_TIMERS": "all", **os.environ}
        done = subprocess.run(command, stdout=subprocess.PIPE, text=True, env=env)
        if not done.stdout.strip():
            raise SystemExit(f"kforge bench printed nothing (exit {done.returncode})")
        bench = json.loads(done.stdout)
        found, figures, past_hold, streams = speedups(bench)  # read while the run directory is there
    timers = sorted({timer for by_timer in found.values() for timer in by_timer})
    print(f"{'problem':<48} " + " ".join(f"{timer:>8}" for timer in timers) + "   "
          + " ".join(f"{timer + ' ms':>10}" for timer in timers))
    for key, by_timer in found.items():
        ms = figures.get(key, {})
        print(f"{key:<48} " + " ".join(f"{by_timer[t]:>7.3f}x" if t in by_timer else f"{'':>8}" for t in timers)
              + "   " + " ".join(f"{ms[t]:>10.4g}" if t in ms else f"{'':>10}" for t in timers)
              + ("   launch past the hold" if key in past_hold else "")
              + (f"   {streams[key]} streams, no hold" if key in streams else ""))
    table = summary(found, args.band)
    print(f"\n{'timer':<8} {'problems':>8} {'median':>8} {'worst':>8} {'outside ±' + format(args.band, '.0%'):>12}")
    for timer, row in table.items():
        print(f"{timer:<8} {row['problems']:>8} {row['median']:>7.3f}x {row['worst']:>7.3f}x "
              f"{row['outside_band']:>12}")
    not_correct = [p["problem"] for p in bench["problems"] if not p.get("correct")]
    if not_correct:
        print(f"\nnot decided correct ({len(not_correct)}): " + ", ".join(not_correct))
    if past_hold:
        print(f"\nlaunch past the hold before an events call ({len(past_hold)}; their events figure counts the "
              f"host's launch, docs/timing.md): " + ", ".join(sorted(past_hold)))
    if args.json:
        args.json.write_text(json.dumps({"speedups": found, "figures_ms": figures, "launch_past_hold": sorted(past_hold),
                                         "streams": streams,
                                         "summary": table, "not_correct": not_correct,
                                         "problems": bench["problems"]}, indent=1, default=str))


if __name__ == "__main__":
    main()
