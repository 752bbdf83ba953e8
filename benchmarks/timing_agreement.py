"""KForge's speedups beside KernelBench's, case by case, on one GPU in one call.

    python benchmarks/timing_agreement.py --kernelbench ~/KernelBench --solutions DIR --backend cuda

``--kernelbench`` is a KernelBench checkout (its problems are ``KernelBench/level*/``, its eval is
``src/kernelbench/eval.py``, or ``src/eval.py`` in older checkouts); ``--problems`` replaces its problems with the
ones the solutions were written against (CUDA-L1's ``ref_code.py`` files, say: today's KernelBench has larger sizes); ``--solutions`` is a directory of solution files
named as the problems (flat or mirroring ``level1/``, ``level2/``) or a ``.jsonl`` file, as ``kforge bench
--solutions`` takes them. For every problem with a solution, in turn on the same GPU:

* KForge evaluates it once (``Harness``, its workers, the eager baseline measured beside it, no baseline cache) and
  reports its speedup against eager by each timer the device has: ``wall``, ``events``, ``device``;
* KernelBench's ``eval_kernel_against_ref`` evaluates it (without the solution's own ``get_inputs``,
  ``get_init_inputs`` and the size constants the problem also sets: KernelBench runs a solution's source in the
  problem's namespace, where a solution written for other sizes would change the problem's inputs; KForge never runs
  that scaffolding) in a child process of its own with CUDA events (``timing_method
  "cuda_event"``); its speedup is its reference's mean time over the solution's mean time. Checkouts whose eval does
  not time the reference get it timed by KernelBench's own timing function. With ``--kernelbench-runs 2`` (the
  default) it evaluates each case twice, in two children: how far KernelBench's speedups move from one run to the
  next is the floor under any agreement figure (no timer can agree with KernelBench more closely than KernelBench
  agrees with itself).

Printed: one row per case with the speedups side by side and the streams KForge's device timer saw the solution's
work run on, then the median absolute relative difference of KForge's ``events`` and ``device`` speedups from
KernelBench's, and of ``device`` from ``events``, over every case and over the one-stream cases (events on the
caller's stream, KernelBench's as KForge's, miss work moved to another); ``kforge_events_mean`` is KForge's events
speedup by the means, KernelBench's statistic, where KForge's is the median; ``kernelbench_rerun`` is KernelBench's
second run against its first. ``--json`` adds every figure, the milliseconds of the solution and of eager by each
timer included.
Without an NVIDIA GPU it stops at once, saying so.
"""

from __future__ import annotations

import argparse
import json
import signal
import statistics
import subprocess
import sys
import tempfile
from pathlib import Path
from typing import Any

KFORGE_TIMERS = ("wall", "events", "device")
CASE_MARK = "KERNELBENCH_CASE "


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--kernelbench", type=Path, required=True, help="a KernelBench checkout")
    parser.add_argument("--solutions", type=Path, required=True, help="solutions: a directory or a .jsonl file")
    parser.add_argument("--problems", type=Path, default=None,
                        help="the problems the solutions were written against (default: the checkout's "
                             "KernelBench/; published solution sets often target an older revision's sizes)")
    parser.add_argument("--backend", default="cuda", help="KForge's backend, also KernelBench's (cuda, triton)")
    parser.add_argument("--filter", action="append", default=[], help="problem glob (level1/*); repeatable")
    parser.add_argument("--limit", type=int, default=0, help="at most this many cases (0: all with a solution)")
    parser.add_argument("--trials", type=int, default=5, help="correctness trials, both sides")
    parser.add_argument("--repetitions", type=int, default=100, help="timed runs, both sides")
    parser.add_argument("--policy", default="report", choices=("strict", "report"),
                        help="KForge's cheat policy: report (default) times PyTorch-level solutions as KernelBench does")
    parser.add_argument("--atol", type=float, default=1e-2, help="both sides' tolerance (KernelBench's default)")
    parser.add_argument("--rtol", type=float, default=1e-2)
    parser.add_argument("--json", action="store_true", help="print every figure as JSON at the end")
    parser.add_argument("--case-timeout", type=float, default=600.0, help="seconds for KernelBench's eval of a case")
    parser.add_argument("--kernelbench-runs", type=int, default=2,
                        help="KernelBench evaluates each case this many times (its own run-to-run spread)")
    parser.add_argument("--kernelbench-case", nargs=2, metavar=("PROBLEM", "SOLUTION"), help=argparse.SUPPRESS)
    args = parser.parse_args()
    if args.kernelbench_case:  # the child process that evaluates one case with KernelBench's eval
        eval_module, timing_module = _kernelbench(args.kernelbench)
        problem_path, solution_path = map(Path, args.kernelbench_case)
        print(CASE_MARK + json.dumps(_kernelbench_speedup(eval_module, timing_module, problem_path.read_text(),
                                                          solution_path.read_text(), args)))
        return 0

    import torch

    if not torch.cuda.is_available():
        print("timing_agreement.py needs an NVIDIA GPU: torch.cuda.is_available() is False here", file=sys.stderr)
        return 2
    cases = _cases(args)
    if not cases:
        print("no problem has a solution in " + str(args.solutions), file=sys.stderr)
        return 2
    rows = []
    print(f"{'case':<48} {'wall':>8} {'events':>8} {'device':>8} {'KB':>8} {'KB again':>8} {'streams':>7}  "
          "(speedups against eager; KB: KernelBench's eval_kernel_against_ref, CUDA events; KB again: its second "
          "run; streams: what KForge's device timer saw the solution's work run on)")
    signal.signal(signal.SIGTERM, signal.default_int_handler)  # a time limit still prints the cases done
    try:
        with _harness(args, cases[0][0]) as harness:
            for problem, candidate in cases:
                row = {"case": problem.key, **_kforge(harness, problem, candidate)}
                runs = [_kernelbench_in_child(args, problem.path, candidate)
                        for _ in range(max(1, args.kernelbench_runs))]
                row["kernelbench"], row["kernelbench_reruns"] = runs[0], runs[1:]
                row["kernelbench_rerun"] = runs[1]["speedup"] if len(runs) > 1 else None
                rows.append(row)
                _print_row(row)
    except KeyboardInterrupt:
        print(f"stopped after {len(rows)} of {len(cases)} cases")
    _print_agreement(rows)
    if args.json:
        print(json.dumps(rows, indent=1))
    return 0


def _kernelbench(checkout: Path) -> tuple[Any, Any]:
    """KernelBench's eval module (and its timing module, where it has one), from the checkout."""
    sys.path.insert(0, str(Path(__file__).resolve().parent))
    from kernelbench_eval import load_kernelbench

    return load_kernelbench(checkout)


def _cases(args: argparse.Namespace) -> list[tuple[Any, Any]]:
    from kforge_core.bench.solutions import open_solutions
    from kforge_core.bench.suite import discover

    problems = discover(args.problems or args.kernelbench / "KernelBench", tuple(args.filter))
    solutions = open_solutions(args.solutions, problems)
    cases = [(p, c) for p in problems if (c := solutions.candidate_for(p)) is not None]
    return cases[:args.limit] if args.limit else cases


def _harness(args: argparse.Namespace, first: Any) -> Any:
    from kforge_core.app import App
    from kforge_core.harness import Harness
    from kforge_core.problem import load_problem
    from kforge_core.registry import BackendRegistry

    app = App()
    settings = app.settings(**{
        "backend": args.backend, "harness.trials": args.trials, "harness.repetitions": args.repetitions,
        "harness.timer": "events", "harness.baselines": ["eager"], "harness.baseline_cache": "off",
        "harness.cheat_policy": args.policy, "harness.atol": args.atol, "harness.rtol": args.rtol,
        "cache_dir": tempfile.mkdtemp(prefix="kforge-agreement-"),
    })
    backend = BackendRegistry(app.plugins).get(args.backend).backend
    return Harness(backend=backend, problem=load_problem(first.path), settings=settings,
                   plugins=app.plugin_selection)


def _kforge(harness: Any, problem: Any, candidate: Any) -> dict[str, Any]:
    from kforge_core.problem import load_problem

    harness.use_problem(load_problem(problem.path))
    verdict = harness.evaluate(candidate)
    by_timer = verdict.speedups_by_timer
    return {"kforge_correct": verdict.correct, "kforge_failure": verdict.failure.value if verdict.failure else None,
            "kforge_message": verdict.message.splitlines()[0][:200] if verdict.failure and verdict.message else "",
            **{f"kforge_{timer}": by_timer.get(timer, {}).get("eager") for timer in KFORGE_TIMERS},
            "kforge_sources": [s.short() for s in verdict.baseline_sources],
            "kforge_streams": verdict.device_streams, "kforge_events_mean": _mean_speedup(verdict, "events"),
            "kforge_ms": _medians_ms(verdict)}


def _medians_ms(verdict: Any) -> dict[str, dict[str, float]]:
    """The solution's and eager's median milliseconds by each timer."""
    eager = dict(dict(verdict.baseline_figures).get("eager", ()))
    return {timer: {"solution": stats.median, **({"eager": eager[timer].median} if timer in eager else {})}
            for timer, stats in dict(verdict.figures).items()}


def _mean_speedup(verdict: Any, timer: str) -> float | None:
    """The speedup against eager by the means of ``timer``'s runs, KernelBench's statistic (KForge's is the
    median on a GPU): how much of a difference is the statistic's."""
    ours = dict(verdict.figures).get(timer)
    eager = dict(dict(verdict.baseline_figures).get("eager", ())).get(timer)
    return eager.mean / ours.mean if ours is not None and eager is not None and ours.mean > 0 else None


def _kernelbench_in_child(args: argparse.Namespace, problem_path: Path, candidate: Any) -> dict[str, Any]:
    """KernelBench's eval of one case in a process of its own, as its batch scripts run it: a solution that
    faults the device ends that process, not the comparison."""
    solution = candidate.files[[f.name for f in candidate.files].index(candidate.entry)].text
    with tempfile.TemporaryDirectory(prefix="kb-case-") as scratch:
        solution_path = Path(scratch) / "solution.py"
        solution_path.write_text(solution)
        command = [sys.executable, str(Path(__file__).resolve()), "--kernelbench", str(args.kernelbench),
                   "--solutions", str(args.solutions), "--backend", args.backend, "--trials", str(args.trials),
                   "--repetitions", str(args.repetitions), "--kernelbench-case", str(problem_path), str(solution_path)]
        try:
            child = subprocess.run(command, capture_output=True, text=True, timeout=args.case_timeout)
        except subprocess.TimeoutExpired:
            return {"correct": False, "speedup": None, "error": f"no answer within {args.case_timeout:.0f} s"}
    line = next((l for l in child.stdout.splitlines() if l.startswith(CASE_MARK)), None)
    if line is None:
        last = (child.stderr.strip().splitlines() or [f"exit {child.returncode}"])[-1]
        return {"correct": False, "speedup": None, "error": last[:200]}
    return json.loads(line[len(CASE_MARK):])


def _kernelbench_speedup(evaluation: Any, timing: Any, reference: str, solution: str,
                         args: argparse.Namespace) -> dict[str, Any]:
    import torch

    kwargs = dict(original_model_src=reference, custom_model_src=_without_scaffolding(solution, reference),
                  seed_num=42,
                  num_correct_trials=args.trials, num_perf_trials=args.repetitions, measure_performance=True,
                  verbose=False, device=torch.device("cuda:0"), build_dir=tempfile.mkdtemp(prefix="kb-build-"))
    try:
        result = evaluation.eval_kernel_against_ref(**kwargs, backend=args.backend, timing_method="cuda_event",
                                                    check_for_excessive_speedup=True)
    except TypeError:  # an older eval: no backend, timing method or reference timing
        result = evaluation.eval_kernel_against_ref(**kwargs)
    if result is None or not result.correctness or result.runtime <= 0:
        return {"correct": bool(result and result.correctness), "speedup": None}
    reference_ms = getattr(result, "ref_runtime", -1.0)
    if reference_ms <= 0:
        reference_ms = _time_reference(evaluation, timing, reference, args.repetitions)
    return {"correct": True, "speedup": reference_ms / result.runtime, "runtime": result.runtime,
            "reference": reference_ms}


def _without_scaffolding(solution: str, reference: str) -> str:
    """The solution without its own ``get_inputs``/``get_init_inputs`` and without the module-level constants the
    reference also sets (``batch_size = 128``): KernelBench's eval runs the solution's source in the reference's
    namespace, so a solution written for other sizes would otherwise change the reference's inputs under it.
    KForge never runs a solution's scaffolding, so both sides then evaluate the same thing."""
    import ast

    def constants(tree: ast.Module) -> set[str]:
        return {target.id for node in tree.body if isinstance(node, ast.Assign)
                for target in node.targets if isinstance(target, ast.Name)}

    try:
        tree, shared = ast.parse(solution), constants(ast.parse(reference))
    except SyntaxError:
        return solution
    tree.body = [node for node in tree.body
                 if not (isinstance(node, ast.FunctionDef) and node.name in ("get_inputs", "get_init_inputs"))
                 and not (isinstance(node, ast.Assign) and all(isinstance(t, ast.Name) and t.id in shared
                                                               for t in node.targets))]
    return ast.unparse(tree)


def _time_reference(evaluation: Any, timing: Any, reference: str, trials: int) -> float:
    """The reference's mean time by KernelBench's own CUDA-event timing, as its baseline scripts measure it."""
    import torch

    context: dict[str, Any] = {}
    model_class, get_init_inputs, get_inputs = evaluation.load_original_model_and_inputs(reference, context)
    evaluation.set_seed(42)
    model = model_class(*get_init_inputs()).cuda()
    inputs = [x.cuda() if isinstance(x, torch.Tensor) else x for x in get_inputs()]
    timer = (timing.get_timing_function("cuda_event") if timing is not None
             else evaluation.time_execution_with_cuda_event)
    with torch.no_grad():
        times = timer(model, inputs, num_trials=trials, verbose=False, device=torch.device("cuda:0"))
    return statistics.fmean(times)


def _fmt(value: float | None) -> str:
    return f"{value:7.2f}x" if value is not None else "      -"


def _print_row(row: dict[str, Any]) -> None:
    kernelbench = row["kernelbench"]["speedup"]
    print(f"{row['case']:<48} " + " ".join(_fmt(row[f"kforge_{t}"]) for t in KFORGE_TIMERS)
          + f" {_fmt(kernelbench)} {_fmt(row['kernelbench_rerun'])} {row.get('kforge_streams') or '-':>7}"
          + ("" if row["kforge_correct"] else f"  (KForge: {row['kforge_failure']}: {row['kforge_message']})")
          + (f"  (KernelBench: {row['kernelbench'].get('error') or 'incorrect'})" if kernelbench is None else ""),
          flush=True)


def _median_difference(rows: list[dict[str, Any]], ours: str, theirs: str) -> tuple[float | None, int]:
    pairs = [(row[ours], row[theirs]) for row in rows if row.get(ours) and row.get(theirs)]
    if not pairs:
        return None, 0
    return statistics.median(abs(a - b) / b for a, b in pairs), len(pairs)


def _print_agreement(rows: list[dict[str, Any]]) -> None:
    """The median differences over every case both sides timed, then over those whose work ran on one stream: work
    moved to a side stream is invisible to events on the caller's stream (KernelBench's and KForge's alike), so
    there the figures say how much of it each side happened to catch, not how fast the solution is."""
    for row in rows:
        row["kernelbench_speedup"] = row["kernelbench"]["speedup"]
    one_stream = [row for row in rows if row.get("kforge_streams") == 1]
    print()
    for ours, theirs in (("kforge_events", "kernelbench_speedup"), ("kforge_events_mean", "kernelbench_speedup"),
                         ("kforge_device", "kernelbench_speedup"), ("kforge_wall", "kernelbench_speedup"),
                         ("kforge_device", "kforge_events"), ("kernelbench_rerun", "kernelbench_speedup")):
        for label, chosen in (("", rows), (", one stream", one_stream)):
            difference, count = _median_difference(chosen, ours, theirs)
            shown = f"{difference:.1%}" if difference is not None else "-"
            print(f"median |{ours} - {theirs}| / {theirs}{label}: {shown} over {count} cases")


if __name__ == "__main__":
    sys.exit(main())
