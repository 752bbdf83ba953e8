"""The harness's own bias: each problem's reference given as its own candidate must come out at 1.00x, on every timer.

A candidate and its baselines run in different worker processes; anything that makes the candidate's process slower
per call (what it does for safety, its allocator or library state) shows here as a speedup below 1 for code that is
the same on both sides. Runs ``kforge bench SUITE --solutions COPIES`` where COPIES holds each problem's own file (the
candidate falls back to ``Model``), with ``--policy report`` (the reference calls PyTorch, which the strict policy
rejects), and prints each problem's speedup against eager by every timer, then per timer the median, the worst and
how many fall outside ``--band`` (default ±3%). Where a timer's figures are fastest runs (``timing/launch_bound.py``;
every timer on the host CPU), the same table follows by the ratio of the two sides' medians. Then, from every timed
run's figure on both sides (kept in the verdict), the summary by each statistic a speedup could be read by: the
fastest run, the 10th and 25th percentiles, the median, and the median of the runs' ratios taken pairwise in run
order; ``--json`` keeps the runs themselves (``runs_ms``) for any other.

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
from dataclasses import dataclass
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


@dataclass(frozen=True)
class SelfTimings:
    """What a bench of references as their own candidates came to, for the problems that came out correct.

    :param speedups: problem -> timer -> speedup against eager.
    :param figures: problem -> timer -> the candidate's figure in milliseconds (the median, or the fastest run of a
        timer whose figure counted the host's launch: ``timing/launch_bound.py``).
    :param past_hold: the problems whose launch outlasted the hold before an events call (their events figure
        counts the host's launch).
    :param streams: problem -> the device streams its runs involved, where more than the caller's (no hold is
        made before their events calls).
    :param eager_from: problem -> the eager baseline's origin where it was not measured beside the candidate in
        full ("confirmed": a figure measured before stood; "remeasured": a prior the fresh runs refuted).
    :param fastest: problem -> the timers whose figures are the fastest runs (``statistic`` ``min``) on both sides.
    :param by_median: problem -> timer -> the eager baseline's median over the candidate's, whatever the statistic.
    :param runs: problem -> timer -> ``{"candidate": [...], "eager": [...]}``: every timed run's figure, in ms
        (from verdicts that keep them), for any other statistic.
    """

    speedups: dict[str, dict[str, float]]
    figures: dict[str, dict[str, float]]
    past_hold: set[str]
    streams: dict[str, int]
    eager_from: dict[str, str]
    fastest: dict[str, list[str]]
    by_median: dict[str, dict[str, float]]
    runs: dict[str, dict[str, dict[str, list[float]]]]


def speedups(bench: dict) -> SelfTimings:
    """Each correct problem's figures, read from the file the bench wrote its verdict to."""
    found = SelfTimings({}, {}, set(), {}, {}, {}, {}, {})
    for problem in bench["problems"]:
        if not problem.get("correct") or not problem.get("verdict_file"):
            continue
        verdict = json.loads(Path(problem["verdict_file"]).read_text())
        by_timer = {timer: ratios["eager"] for timer, ratios in verdict.get("speedups_by_timer", {}).items()
                    if "eager" in ratios}
        if not by_timer:
            continue
        name = problem["problem"]
        found.speedups[name] = by_timer
        found.figures[name] = {timer: stats["min"] if stats.get("statistic") == "min" else stats["median"]
                               for timer, stats in verdict.get("figures", {}).items()}
        mine, eager = verdict.get("figures", {}), verdict.get("baseline_figures", {}).get("eager", {})
        both = [timer for timer in mine if timer in eager]
        found.fastest[name] = [timer for timer in both if mine[timer].get("statistic") == "min"]
        found.by_median[name] = {timer: eager[timer]["median"] / mine[timer]["median"] for timer in both
                                 if mine[timer]["median"] > 0}
        found.runs[name] = {timer: {"candidate": mine[timer].get("samples", []),
                                    "eager": eager[timer].get("samples", [])} for timer in both}
        if LAUNCH_PAST_HOLD in ((verdict.get("method") or {}).get("notes") or ""):
            found.past_hold.add(name)
        if verdict.get("device_streams", 0) > 1:
            found.streams[name] = verdict["device_streams"]
        origin = next((source.get("origin") for source in verdict.get("baseline_sources", [])
                       if source.get("baseline") == "eager"), "measured")
        if origin != "measured":
            found.eager_from[name] = origin
    return found


def _quantile(share: float):
    def take(values: list[float]) -> float:
        ordered = sorted(values)
        position = share * (len(ordered) - 1)  # linear between the two nearest runs
        low = int(position)
        high = min(low + 1, len(ordered) - 1)
        return ordered[low] + (ordered[high] - ordered[low]) * (position - low)
    return take


# the statistics a speedup can be read by from both sides' kept runs: the eager baseline's over the candidate's
STATISTICS = {"fastest run": min, "10th percentile": _quantile(0.10), "25th percentile": _quantile(0.25),
              "median": statistics.median}


def paired_median(candidate: list[float], eager: list[float]) -> float:
    """The median of the runs' ratios taken pairwise in run order: run i of each side lies in the same block of the
    window, so a drift of the host's speed over the window divides out."""
    return statistics.median(e / c for c, e in zip(candidate, eager) if c > 0)


def by_statistic(runs: dict[str, dict[str, dict[str, list[float]]]]) -> dict[str, dict[str, dict[str, float]]]:
    """statistic -> problem -> timer -> speedup, from the kept runs (problems and timers with runs on both sides)."""
    table: dict[str, dict[str, dict[str, float]]] = {name: {} for name in [*STATISTICS, "paired median"]}
    for problem, by_timer in runs.items():
        for timer, sides in by_timer.items():
            candidate, eager = sides.get("candidate") or [], sides.get("eager") or []
            if not candidate or not eager:
                continue
            for name, take in STATISTICS.items():
                if (candidate_ms := take(candidate)) > 0:
                    table[name].setdefault(problem, {})[timer] = take(eager) / candidate_ms
            table["paired median"].setdefault(problem, {})[timer] = paired_median(candidate, eager)
    return {name: found for name, found in table.items() if found}


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
    parser.add_argument("--from-runs", type=Path, metavar="BENCH_DIR",
                        help="run nothing: read the verdicts a bench of this script left in BENCH_DIR (the bench's "
                             "directory under its --runs-dir), as when a time limit ended it before it printed")
    args, bench_args = parser.parse_known_args()  # what it does not know goes to kforge bench (--timer, --filter)
    if args.from_runs:
        bench = bench_from_runs(args.from_runs)
        report(speedups(bench), bench, args.band, args.json)
        return
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
        found = speedups(bench)  # read while the run directory is there
    report(found, bench, args.band, args.json)


def bench_from_runs(bench_dir: Path) -> dict:
    """The problems of a bench as its ``--json`` would list them, from the verdicts it wrote under ``bench_dir``:
    every problem that has a verdict, in name order (a problem still running when the bench ended has none)."""
    verdicts = sorted((bench_dir / "problems").glob("*/verdict.json"))
    if not verdicts:
        raise SystemExit(f"no verdict under {bench_dir / 'problems'}")
    problems = []
    for path in verdicts:
        verdict = json.loads(path.read_text())
        problems.append({"problem": path.parent.name, "correct": bool(verdict.get("correct")),
                         "verdict_file": str(path)})
    return {"problems": problems}


def report(found: SelfTimings, bench: dict, band: float, json_path: Path | None) -> None:
    """Print the problems' speedups and their summaries; write them to ``json_path`` where given."""
    timers = sorted({timer for by_timer in found.speedups.values() for timer in by_timer})
    print(f"{'problem':<48} " + " ".join(f"{timer:>8}" for timer in timers) + "   "
          + " ".join(f"{timer + ' ms':>10}" for timer in timers))
    for key, by_timer in found.speedups.items():
        ms = found.figures.get(key, {})
        print(f"{key:<48} " + " ".join(f"{by_timer[t]:>7.3f}x" if t in by_timer else f"{'':>8}" for t in timers)
              + "   " + " ".join(f"{ms[t]:>10.4g}" if t in ms else f"{'':>10}" for t in timers)
              + ("   launch past the hold" if key in found.past_hold else "")
              + (f"   {found.streams[key]} streams, no hold" if key in found.streams else "")
              + (f"   eager {found.eager_from[key]}" if key in found.eager_from else ""))
    table = summary(found.speedups, band)
    print(f"\n{'timer':<8} {'problems':>8} {'median':>8} {'worst':>8} {'outside ±' + format(band, '.0%'):>12}")
    for timer, row in table.items():
        print(f"{timer:<8} {row['problems']:>8} {row['median']:>7.3f}x {row['worst']:>7.3f}x "
              f"{row['outside_band']:>12}")
    at_fastest = {name: {timer: found.by_median[name][timer] for timer in fastest if timer in found.by_median[name]}
                  for name, fastest in found.fastest.items() if fastest}
    if at_fastest:  # the same problems by the medians, for the timers taken at their fastest run
        print(f"\nthe {len(at_fastest)} problems whose figures are fastest runs, by the medians' ratio instead:")
        print(f"{'timer':<8} {'problems':>8} {'median':>8} {'worst':>8} {'outside ±' + format(band, '.0%'):>12}")
        for timer, row in summary(at_fastest, band).items():
            print(f"{timer:<8} {row['problems']:>8} {row['median']:>7.3f}x {row['worst']:>7.3f}x "
                  f"{row['outside_band']:>12}")
    statistics_table = by_statistic(found.runs)
    if statistics_table:  # every problem again, by each statistic of the kept runs
        print(f"\nby each statistic of the kept runs ({len(found.runs)} problems):")
        print(f"{'statistic':<16} {'timer':<8} {'problems':>8} {'median':>8} {'worst':>8} "
              f"{'outside ±' + format(band, '.0%'):>12}")
        for name, found_by in statistics_table.items():
            for timer, row in summary(found_by, band).items():
                print(f"{name:<16} {timer:<8} {row['problems']:>8} {row['median']:>7.3f}x {row['worst']:>7.3f}x "
                      f"{row['outside_band']:>12}")
    not_correct = [p["problem"] for p in bench["problems"] if not p.get("correct")]
    if not_correct:
        print(f"\nnot decided correct ({len(not_correct)}): " + ", ".join(not_correct))
    if found.past_hold:
        print(f"\nlaunch past the hold before an events call ({len(found.past_hold)}; their events figure counts "
              f"the host's launch, docs/timing.md): " + ", ".join(sorted(found.past_hold)))
    if found.eager_from:
        print(f"\neager baseline from a figure measured before ({len(found.eager_from)}; confirmed: it stood, "
              f"remeasured: refuted and measured again): "
              + ", ".join(f"{k} {v}" for k, v in sorted(found.eager_from.items())))
    if json_path:
        json_path.write_text(json.dumps({"speedups": found.speedups, "figures_ms": found.figures,
                                         "launch_past_hold": sorted(found.past_hold), "streams": found.streams,
                                         "eager_from": found.eager_from, "at_fastest_run": found.fastest,
                                         "by_median": found.by_median, "runs_ms": found.runs,
                                         "by_statistic": statistics_table,
                                         "summary": table, "not_correct": not_correct,
                                         "problems": bench["problems"]}, indent=1, default=str))


if __name__ == "__main__":
    main()
