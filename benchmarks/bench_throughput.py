"""Seconds per problem and verdict agreement: ``kforge bench`` and KernelBench's own eval on the same problems,
solutions and tolerance, side by side.

KForge runs the suite once with ``kforge bench --solutions ... --json`` (every problem: compile, verify, time against
its baselines). With ``--kernelbench DIR`` (a checkout of ScalingIntelligence/KernelBench), each solution is then
evaluated by KernelBench's ``eval_kernel_against_ref`` in a child process of its own (as its batch scripts do, with a
time limit per problem), on the device this process sees. Each line: the problem, KForge's verdict and seconds
(as ``kforge bench`` reports them: a worker's start counts on the first problem only), KernelBench's verdict and
seconds (its child's start, Python and torch, included), and whether they agree (correct or not). KernelBench's eval
is imported once first: where it cannot be (its checkout needs ``pydantic``, which a GPU machine may lack), that is
said and no problem is counted against it. Only problems
with a solution are evaluated. ``kforge bench``'s progress goes to stderr as it happens, and a time limit (SIGTERM)
or Ctrl-C still prints the table of the problems done: during a ``kforge bench``, once it has finished the problems
in hand (it is told the stop too) and printed them. With ``--in-turn N``, the two tools
take N problems each in turn (a ``kforge bench`` of those N, then KernelBench's eval of the same), so that a time
limit that ends the run leaves every problem done by both compared, rather than KForge's part done alone; each
``kforge bench`` counts its workers' start on its first problem.

    python benchmarks/bench_throughput.py SUITE --solutions DIR --backend cuda
    python benchmarks/bench_throughput.py KernelBench/KernelBench/level2 --solutions sols/ --backend cuda \\
        --kernelbench KernelBench --filter '1*' --kforge-args '--build-jobs 16'
"""

from __future__ import annotations

import argparse
import json
import shlex
import signal
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path
from typing import Callable

from kforge_core.bench.solutions import open_solutions
from kforge_core.bench.suite import discover

KERNELBENCH_CHILD = r'''
import inspect, json, sys, time
root, reference_path, solution_path, trials, atol, rtol = sys.argv[1:7]
sys.path.insert(0, sys.argv[8])
from kernelbench_eval import load_kernelbench
from pathlib import Path
eval_kernel_against_ref = load_kernelbench(Path(root))[0].eval_kernel_against_ref
import torch
parameters = inspect.signature(eval_kernel_against_ref).parameters
options = {"seed_num": 42, "num_correct_trials": int(trials), "num_perf_trials": 100, "measure_performance": True,
           "verbose": False, "build_dir": tempfile_dir if (tempfile_dir := sys.argv[7]) else None, "device": 0}
for name, value in (("atol", float(atol)), ("rtol", float(rtol)), ("backend", "cuda"),
                    ("precision", torch.float32)):
    if name in parameters:
        options[name] = value
options = {k: v for k, v in options.items() if k in parameters}
start = time.perf_counter()
result = eval_kernel_against_ref(open(reference_path).read(), open(solution_path).read(), **options)
seconds = time.perf_counter() - start
print("KERNELBENCH_RESULT " + json.dumps({
    "compiled": bool(getattr(result, "compiled", False)), "correct": bool(getattr(result, "correctness", False)),
    "runtime_ms": getattr(result, "runtime", None), "seconds": seconds,
    "error": str((getattr(result, "metadata", {}) or {}).get("runtime_error") or
                 (getattr(result, "metadata", {}) or {}).get("compilation_error") or "")[:200]}))
'''

# KernelBench's eval imported once before the problems: where it cannot be (a package its checkout needs is missing,
# such as pydantic), no problem is counted against it as its verdict
KERNELBENCH_IMPORT = r'''
import sys
sys.path.insert(0, sys.argv[2])
from kernelbench_eval import load_kernelbench
from pathlib import Path
load_kernelbench(Path(sys.argv[1]))
'''

# the baselines' own build: waited for within timing, and by a suite with nothing else to evaluate meanwhile
BUILD_PHASES = ("baselines_ready", "baseline_builds")


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("suite", type=Path)
    parser.add_argument("--solutions", type=Path, required=True)
    parser.add_argument("--backend", default="cuda")
    parser.add_argument("--kernelbench", type=Path, help="a KernelBench checkout: evaluate with its eval too")
    parser.add_argument("--filter", dest="filters", action="append", default=[])
    parser.add_argument("--atol", type=float, default=1e-2, help="both sides' tolerance (KernelBench's default)")
    parser.add_argument("--rtol", type=float, default=1e-2)
    parser.add_argument("--trials", type=int, default=5, help="correctness trials, both sides")
    parser.add_argument("--kernelbench-timeout", type=float, default=900.0, help="seconds per problem")
    parser.add_argument("--kforge-args", default="", help="more kforge bench flags, in one string")
    parser.add_argument("--kforge-json", type=Path, help="also write kforge bench's --json document here (each "
                        "problem's phases, verdict and figures; with --in-turn, each bench's on a line of its own)")
    parser.add_argument("--in-turn", type=int, default=0, metavar="N",
                        help="the two tools take N problems each in turn (0: KForge's whole bench first)")
    args = parser.parse_args()
    problems = discover(args.suite, tuple(args.filters))
    solutions = open_solutions(args.solutions, problems)
    problems = [p for p in problems if solutions.candidate_for(p) is not None]
    if not problems:
        sys.exit(f"no problem of {args.suite} has a solution in {args.solutions}")
    signal.signal(signal.SIGTERM, signal.default_int_handler)  # a time limit still prints what was done
    ours: dict[str, dict] = {}
    theirs: dict[str, dict] = {}
    compare = bool(args.kernelbench) and _kernelbench_ready(args.kernelbench)
    size = args.in_turn or len(problems)

    def kernelbench(chunk: list) -> None:
        if compare:
            _kernelbench(args, chunk, solutions, theirs)

    try:
        in_turn(problems, size, lambda chunk: _kforge(args, chunk, ours), kernelbench, ours)
    except (KeyboardInterrupt, SystemExit) as stop:
        print(f"stopped ({type(stop).__name__}): KForge's verdicts on {len(ours)} and KernelBench's on "
              f"{len(theirs)} of {len(problems)} problems", file=sys.stderr)
    _print(problems, ours, theirs, turn_firsts(problems, size))


def turn_firsts(problems: list, size: int) -> frozenset[str]:
    """The problems that begin a ``kforge bench`` (one a turn of ``size``): each carries that bench's start."""
    return frozenset(problem.key for problem in problems[::size])


def in_turn(problems: list, size: int, kforge: Callable[[list], dict[str, dict]],
            kernelbench: Callable[[list], None], ours: dict[str, dict]) -> None:
    """Each tool on ``size`` problems at a time: ``kforge`` (its verdicts go into ``ours``) and then ``kernelbench``
    on the same ones, chunk after chunk. A Ctrl-C or a time limit propagates, with what was finished kept."""
    for first in range(0, len(problems), size):
        chunk = problems[first:first + size]
        ours.update(kforge(chunk))
        kernelbench(chunk)


def _kforge(args: argparse.Namespace, problems, ours: dict[str, dict]) -> dict[str, dict]:
    """One ``kforge bench`` of the problems with a solution; its progress lines reach stderr as they come. Stopped,
    it puts what the bench finished in ``ours`` before the stop goes on."""
    with tempfile.TemporaryDirectory(prefix="kforge-throughput-") as runs:
        names = [problem.key for problem in problems]
        command = [sys.executable, "-c", "from kforge_core.cli import main; main()", "bench", str(args.suite),
                   "--backend", args.backend, "--solutions", str(args.solutions), "--json", "--runs-dir", runs,
                   "--atol", str(args.atol), "--rtol", str(args.rtol), "--trials", str(args.trials),
                   *(f for name in names for f in ("--filter", name)), *shlex.split(args.kforge_args)]
        start = time.perf_counter()
        printed, returncode, stop = bench_output(command)
        wall = time.perf_counter() - start
    if returncode != 0 and not (stop and printed.strip()):
        if stop:
            raise stop
        sys.exit(f"kforge bench failed ({returncode})")
    document = json.loads(printed)
    if args.kforge_json and args.in_turn:  # one bench per chunk: one document a line
        with args.kforge_json.open("a") as out:
            out.write(json.dumps(document) + "\n")
    elif args.kforge_json:
        args.kforge_json.write_text(printed)
    print(f"kforge bench: {len(document['problems'])} problems in {wall:.1f} s (process wall time, start-up "
          "included)" + (", stopped by a time limit or Ctrl-C" if stop else ""))
    found = {p["problem"]: p for p in document["problems"]}
    if stop:  # what the stopped bench finished counts; no other turn starts
        ours.update(found)
        raise stop
    return found


def bench_output(command: list[str]) -> tuple[str, int, KeyboardInterrupt | None]:
    """Run ``kforge bench`` (``command``): what it printed, its exit status, and the stop (a time limit's SIGTERM or
    a Ctrl-C) that came while it ran, if one did. The bench is told the stop too (a process group's signal) and
    finishes the problems in hand before it prints them; it is waited for, so that its run directory outlives it."""
    process = subprocess.Popen(command, stdout=subprocess.PIPE, text=True)  # stderr: the bench's progress
    try:
        printed, _ = process.communicate()
        return printed, process.returncode, None
    except KeyboardInterrupt as stop:
        printed, _ = process.communicate()
        return printed, process.returncode, stop


def _kernelbench_ready(checkout: Path) -> bool:
    why = kernelbench_unavailable(checkout)
    if why:
        print(f"kernelbench: its eval cannot be imported, no problem evaluated by it: {why}", file=sys.stderr)
    return not why


def _kernelbench(args: argparse.Namespace, problems, solutions, results: dict[str, dict]) -> None:
    """KernelBench's eval of each problem, its result put in ``results`` as each one finishes."""
    with tempfile.TemporaryDirectory(prefix="kernelbench-") as scratch:
        for problem in problems:
            results[problem.key] = _kernelbench_one(args, problem, solutions.candidate_for(problem), scratch)


def kernelbench_unavailable(checkout: Path) -> str:
    """Why KernelBench's eval cannot be imported from ``checkout`` in a child process ("": it can), in one line."""
    command = [sys.executable, "-c", KERNELBENCH_IMPORT, str(checkout.resolve()), str(Path(__file__).resolve().parent)]
    child = subprocess.run(command, capture_output=True, text=True, timeout=300)
    if child.returncode == 0:
        return ""
    return (child.stderr.strip().splitlines() or [f"exit {child.returncode}"])[-1]


def _kernelbench_one(args: argparse.Namespace, problem, candidate, scratch: str) -> dict:
    """KernelBench's eval of one solution, in a child process of its own, with its time limit."""
    solution = Path(scratch) / f"{problem.key.replace('/', '_')}.py"
    solution.write_text(next(f.text for f in candidate.files if f.name == candidate.entry))
    command = [sys.executable, "-c", KERNELBENCH_CHILD, str(args.kernelbench.resolve()), str(problem.path),
               str(solution), str(args.trials), str(args.atol), str(args.rtol),
               str(Path(scratch) / "build"), str(Path(__file__).resolve().parent)]
    start = time.perf_counter()
    try:
        child = subprocess.run(command, capture_output=True, text=True, timeout=args.kernelbench_timeout)
        line = next((l for l in child.stdout.splitlines() if l.startswith("KERNELBENCH_RESULT ")), None)
        result = json.loads(line.split(" ", 1)[1]) if line else {
            "compiled": False, "correct": False, "error": (child.stderr.strip().splitlines() or ["?"])[-1]}
    except subprocess.TimeoutExpired:
        result = {"compiled": False, "correct": False, "error": "timed out"}
    result["wall_s"] = time.perf_counter() - start  # the child's start-up included
    why = f" ({result['error']})" if not result["correct"] and result.get("error") else ""
    print(f"kernelbench {problem.key}: {'correct' if result['correct'] else 'wrong'} in {result['wall_s']:.1f} s{why}",
          file=sys.stderr)
    return result


def _print(problems, kforge: dict[str, dict], kernelbench: dict[str, dict], firsts: frozenset[str]) -> None:
    print(f"{'problem':<48} {'kforge':<24} {'s':>7}   {'kernelbench':<24} {'s':>7}  agree")
    agree = compared = 0
    for problem in problems:
        ours, theirs = kforge.get(problem.key), kernelbench.get(problem.key)
        verdict = ("correct" if ours["correct"] else ours["failure"]) if ours else "-"
        seconds = f"{ours['seconds']:.1f}" if ours and ours.get("seconds") else "-"
        kb_verdict = ("correct" if theirs["correct"] else "compile_error" if not theirs["compiled"] else "wrong") \
            if theirs else "-"
        kb_seconds = f"{theirs['wall_s']:.1f}" if theirs else "-"
        same = ""
        if ours and theirs:
            compared += 1
            agree += ours["correct"] == theirs["correct"]
            same = "yes" if ours["correct"] == theirs["correct"] else "NO"
        print(f"{problem.key:<48} {verdict:<24} {seconds:>7}   {kb_verdict:<24} {kb_seconds:>7}  {same}")
    _summary("kforge", [p["seconds"] for p in kforge.values() if p.get("seconds")])
    _summary("kforge without the baselines' own build (baselines_ready, baseline_builds)",
             [_less_build(p) for p in kforge.values() if p.get("seconds")])
    _phases(kforge.values())
    _summary("kernelbench", [r["wall_s"] for r in kernelbench.values()])
    if compared:
        print(f"verdicts agree on {agree} of {compared} problems")
        print(side_by_side(problems, kforge, kernelbench, firsts))


def _less_build(result: dict) -> float:
    """KForge's seconds on a problem, less what it waited for the ``torch.compile`` baseline's own build."""
    phases = dict(result.get("phases") or ())
    return result["seconds"] - sum(phases.get(phase, 0.0) for phase in BUILD_PHASES)


def side_by_side(problems, kforge: dict[str, dict], kernelbench: dict[str, dict],
                 firsts: frozenset[str] = frozenset()) -> str:
    """On the problems both tools did: KForge's seconds without the ``torch.compile`` baseline's own build against
    KernelBench's eval's (median, mean, sum), which KForge was the slower on, what its timed runs waited for the next
    problem's baseline worker (``quiet``), summed, and the same comparison without ``firsts``, the problems that
    began a ``kforge bench`` and carry its start (KernelBench's eval starts a process for every problem)."""
    both = [(p.key, kforge[p.key], kernelbench[p.key]) for p in problems
            if p.key in kforge and p.key in kernelbench and kforge[p.key].get("seconds")]
    if not both:
        return "no problem done by both"
    quiet = sum(dict(result.get("phases") or ()).get("quiet", 0.0) for _, result, _ in both)
    slower = [key for key, ours, theirs in both if _less_build(ours) > theirs["wall_s"]]
    line = (f"on the {len(both)} problems both did: {_compared(both)}; kforge slower on {len(slower)}"
            f"{' (' + ', '.join(slower) + ')' if slower else ''}; its timed runs waited {quiet:.1f} s in all for "
            "other work (quiet)")
    rest = [entry for entry in both if entry[0] not in firsts]
    if firsts & {key for key, _, _ in both} and rest:
        line += f"; without each bench's first problem ({len(rest)}): {_compared(rest)}"
    return line


def _compared(both: list[tuple[str, dict, dict]]) -> str:
    ours = [_less_build(result) for _, result, _ in both]
    theirs = [result["wall_s"] for _, _, result in both]
    return (f"kforge without the build median {statistics.median(ours):.2f} s, mean {statistics.mean(ours):.2f} s, "
            f"sum {sum(ours):.1f} s; kernelbench median {statistics.median(theirs):.2f} s, mean "
            f"{statistics.mean(theirs):.2f} s, sum {sum(theirs):.1f} s")


def _phases(results) -> None:
    """Where KForge's seconds went, phase by phase (each problem's ``phases``): the median and the sum over the
    problems that had the phase."""
    spent: dict[str, list[float]] = {}
    for result in results:
        for name, seconds in result.get("phases") or ():
            spent.setdefault(name, []).append(seconds)
    if spent:
        print("kforge phases: " + ", ".join(f"{name} median {statistics.median(values):.2f} s (sum {sum(values):.1f})"
                                            for name, values in spent.items()))
        for result in results:
            if result.get("phases"):
                print(f"  {result['problem']:<46} " + " ".join(f"{name} {seconds:.2f}"
                                                              for name, seconds in result["phases"]))


def _summary(name: str, seconds: list[float]) -> None:
    if seconds:
        print(f"{name}: median {statistics.median(seconds):.2f} s, mean {statistics.mean(seconds):.2f} s per "
              f"problem ({len(seconds)} problems)")


if __name__ == "__main__":
    main()
