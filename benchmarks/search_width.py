"""Candidates evaluated per hour by a wide search (``kforge run --width 8 --devices 0,1``) against the one-at-a-time
loop (``--width 1 --devices 0``), with the ``corpus:`` stand-in model served over HTTP (the real ``openai-like``
provider, its concurrency, retries and timeouts), so no paid model is needed.

    python benchmarks/search_width.py SUITE --corpus SOLUTIONS --backend cuda --devices 0,1 --width 8 \\
        --latency 20 --fail 0.3 --problems 5
    python benchmarks/search_width.py tests/harness/problems --corpus CORPUS --backend cpu --devices 0 --width 4 \\
        --latency 0 --problems 2 --rounds 1                                  # the host CPU, in minutes

SUITE holds the problems (the first ``--problems`` that the corpus has a kernel for are run), SOLUTIONS their
kernels (as ``kforge bench --solutions`` reads them; see ``kforge_core.llm.corpus``). Each configuration runs every
problem in turn, a ``kforge run`` process each, with the same budget (``--max-llm-calls`` per run, ``--rounds``
optimization rounds) and an empty cache directory of its own. Printed per configuration: the wall time, the
candidates evaluated (those whose reply held code) and per hour, each device's busy fraction (the share of the
run's wall time it spent evaluating, as the run reports it), the mean and the most LLM requests in flight (as the
server saw them), and the LLM requests used against the budget (never more); then the ratio of the throughputs.
"""

from __future__ import annotations

import argparse
import json
import os
import re
import subprocess
import sys
import tempfile
import time
from pathlib import Path

from kforge_core.bench.suite import discover
from kforge_core.llm.corpus import CorpusModel, CorpusOptions
from kforge_core.llm.corpus_server import CorpusServer
from kforge_core.report import RunReport
from kforge_core.store import RunStore

_BUSY = re.compile(r"device (\d+) (\d+)%")


def kforge(*args: str) -> list[str]:
    return [sys.executable, "-c", "from kforge_core.cli import main; main()", *args]


def configuration(problems, server: CorpusServer, args, width: int, devices: str) -> dict:
    """Every problem run in turn with ``--width width --devices devices``."""
    figures = {"width": width, "devices": devices, "runs": []}
    with tempfile.TemporaryDirectory(prefix="kforge-search-width-") as scratch:
        env = {**os.environ, "KFORGE_CACHE_DIR": str(Path(scratch) / "cache")}
        runs_dir = Path(scratch) / "runs"
        requests_before, in_flight_before = server.requests, server.in_flight_seconds()
        start = time.perf_counter()
        for problem in problems:
            command = kforge(
                "run", str(problem.path), "--backend", args.backend, "--llm", "openai-like:corpus", "--base-url",
                server.url, "--width", str(width), "--keep", str(min(args.keep, width)), "--devices", devices,
                "--max-llm-calls", str(args.max_llm_calls), "--optimization-rounds", str(args.rounds),
                "--functional-attempts", str(args.functional_attempts), "--runs-dir", str(runs_dir),
                "--references", "none", *args.kforge_args.split())
            began = time.perf_counter()
            done = subprocess.run(command, env=env, capture_output=True, text=True)
            seconds = time.perf_counter() - began
            if done.returncode not in (0, 3):
                sys.exit(f"kforge run {problem.key} failed ({done.returncode}):\n{done.stdout[-3000:]}\n"
                         f"{done.stderr[-3000:]}")
            busy = {int(d): int(p) / 100 for d, p in _BUSY.findall(done.stdout)}
            figures["runs"].append({"problem": problem.key, "seconds": seconds, "busy": busy})
        figures["wall_s"] = wall = time.perf_counter() - start
        figures["server_requests"] = server.requests - requests_before
        figures["mean_in_flight"] = (server.in_flight_seconds() - in_flight_before) / wall
        with RunStore(runs_dir) as store:
            runs = store.list_runs()
            reports = [RunReport.from_store(store, run.id) for run in runs]
            requests = [sum(c.requests for c in store.llm_calls(run.id)) for run in runs]
    figures["evaluated"] = sum(1 for r in reports for a in r.attempts if a.outcome is not None)
    figures["correct"] = sum(1 for r in reports for a in r.attempts if a.rankable)
    figures["per_hour"] = 3600 * figures["evaluated"] / wall
    figures["requests_per_run"] = requests
    figures["budget_kept"] = all(n <= args.max_llm_calls for n in requests)
    figures["best_speedups"] = [r.best.speedup if r.best is not None else None for r in reports]
    weighted = {}
    for run in figures["runs"]:
        for device, fraction in run["busy"].items():
            weighted[device] = weighted.get(device, 0.0) + fraction * run["seconds"]
    figures["busy"] = {d: s / sum(r["seconds"] for r in figures["runs"]) for d, s in sorted(weighted.items())}
    return figures


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("suite", type=Path)
    parser.add_argument("--corpus", type=Path, required=True, help="the problems' kernels")
    parser.add_argument("--backend", default="cuda")
    parser.add_argument("--devices", default="0,1", help="the wide search's devices (the narrow one uses the first)")
    parser.add_argument("--width", type=int, default=8)
    parser.add_argument("--keep", type=int, default=2)
    parser.add_argument("--latency", type=float, default=20.0, help="seconds the stand-in model takes per request")
    parser.add_argument("--jitter", type=float, default=0.0, help="up to this many more seconds, drawn per request")
    parser.add_argument("--fail", type=float, default=0.3, help="the fraction of candidates failing on purpose")
    parser.add_argument("--problems", type=int, default=5)
    parser.add_argument("--rounds", type=int, default=3, help="optimization rounds per run")
    parser.add_argument("--functional-attempts", type=int, default=3)
    parser.add_argument("--max-llm-calls", type=int, default=60, help="the budget of each run")
    parser.add_argument("--kforge-args", default="", help="more arguments for every kforge run, as one string")
    parser.add_argument("--json", type=Path, help="write every figure here")
    args = parser.parse_args()

    model = CorpusModel(args.corpus, CorpusOptions(latency_s=args.latency, jitter_s=args.jitter, fail=args.fail))
    problems = [p for p in discover(args.suite) if model.kernels(p.path.stem)][:args.problems]
    if not problems:
        sys.exit(f"no problem of {args.suite} has a kernel in {args.corpus}")
    print(f"{len(problems)} problems: {', '.join(p.key for p in problems)}; stand-in latency {args.latency:g} s, "
          f"{args.fail:.0%} failing candidates")
    with CorpusServer(model) as server:
        narrow = configuration(problems, server, args, 1, args.devices.split(",")[0])
        wide = configuration(problems, server, args, args.width, args.devices)
    for figures in (narrow, wide):
        busy = ", ".join(f"device {d} {f:.0%}" for d, f in figures["busy"].items()) or "not reported"
        print(f"--width {figures['width']} --devices {figures['devices']}: {figures['wall_s']:.0f} s, "
              f"{figures['evaluated']} candidates evaluated ({figures['correct']} correct), "
              f"{figures['per_hour']:.0f} per hour; busy {busy}; LLM requests in flight: mean "
              f"{figures['mean_in_flight']:.1f}; requests per run {figures['requests_per_run']} of a budget of "
              f"{args.max_llm_calls} ({'never exceeded' if figures['budget_kept'] else 'EXCEEDED'})")
    print(f"candidates evaluated per hour: {wide['per_hour'] / narrow['per_hour']:.1f}x with --width {args.width} "
          f"--devices {args.devices}")
    if args.json:
        args.json.write_text(json.dumps({"narrow": narrow, "wide": wide}, indent=2))


if __name__ == "__main__":
    main()
