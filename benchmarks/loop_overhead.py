"""The agent loop's own overhead per attempt, without LLM, compile and measurement time (goal: <= 50 ms).

It runs the real loop (`kforge_core.loop.session.start_run`: prompts rendered from the shipped templates with the
cpu backend's real lowering, replies parsed, every step committed to the SQLite store, artifacts written, progress
reported, report.md/best.py/plot at the end) with a replay script of realistic replies and an evaluator that answers
at once with real `Verdict` records. The time spent inside that evaluator and inside the LLM calls is measured and
subtracted, so what remains is the loop's own work.

    python benchmarks/loop_overhead.py [--rounds 30]

Prints the per-attempt overhead (median, p90, max), the one-off costs (set-up, final outputs), and the time to
replay a finished run's steps on resume.
"""

from __future__ import annotations

import argparse
import json
import statistics
import tempfile
import time
from contextlib import contextmanager
from pathlib import Path
from typing import Any, Iterator

from kforge_core.app import App
from kforge_core.harness import RuntimeStats, TimingMethod, Verdict
from kforge_core.loop.session import plan_run, resume_run, start_run
from kforge_core.records import CompileResult, KernelMetrics, ProfileResult, ProfileSummary, TrialError, VerifyResult
from kforge_core.settings import BudgetSettings, LLMSettings, Settings
from kforge_core.store import RunStore

ROOT = Path(__file__).resolve().parents[1]
PROBLEM = ROOT / "examples" / "problems" / "elementwise_gelu_scale.py"
DEMO = [json.loads(line) for line in (ROOT / "examples" / "replay" / "cpu_demo.jsonl").read_text().splitlines()]
SUMMARY = ProfileSummary(text="\n".join(
    [f"Numba profile of ModelNew.forward: {ms:.1f} ms median on 2 thread(s)." for ms in range(1, 4)]
    + ["Findings, most important first:"]
    + [f"{i}. gelu_scale_shift: a finding with numbers, {i * 7}% of the time, as the cpu backend writes them "
       "(hot loops scalar, calls per element, float64 conversions, thread scaling)." for i in range(1, 9)]))


class InstantEvaluator:
    """Answers at once with real Verdict records; keeps the time spent in it, which is not the loop's."""

    def __init__(self) -> None:
        self.seconds = 0.0
        self.calls = 0

    def baselines(self) -> dict[str, RuntimeStats]:
        return {"eager": RuntimeStats(85.0, 85.5, 0.9, 84.1, 20), "compile": RuntimeStats(40.0, 40.2, 0.3, 39.8, 20)}

    def evaluate(self, candidate, *, profile: bool = False) -> Verdict:
        start = time.perf_counter()
        self.calls += 1
        ms = 100.0 / self.calls  # every attempt faster than the last: no round is cut short for lack of gain
        runtime = RuntimeStats(ms, ms * 1.01, ms * 0.01, ms * 0.99, 20)
        baselines = tuple(self.baselines().items())
        verdict = Verdict(
            candidate=candidate.label, candidate_digest=candidate.digest, backend="cpu", problem=PROBLEM.stem,
            compile=CompileResult(ok=True, log="", seconds=1.2),
            verify=VerifyResult(correct=True, trials=tuple(TrialError(42 + i, True, 1e-6, 1e-6) for i in range(5)),
                                notes=("copied 0 parameters and 0 buffers from Model into ModelNew",)),
            runtime=runtime, baselines=baselines,
            speedups=tuple((name, stats.median / ms) for name, stats in baselines), flags=(), failure=None,
            message="", method=TimingMethod("cpu", 3, 20, 0, "none", "time.perf_counter around forward", True),
            profile=ProfileResult(tool="numba", kernels=(KernelMetrics("gelu_scale_shift", ms * 1e3),),
                                  raw="x" * 4000) if profile else None,
            stdout="", stderr="", worker_replaced=False,
        )
        self.seconds += time.perf_counter() - start
        return verdict

    def summarize(self, profile: ProfileResult) -> ProfileSummary:
        return SUMMARY


class TimedProgress:
    """Timestamps of the loop's events: one per finished attempt."""

    def __init__(self) -> None:
        self.attempts: list[float] = []
        self.first_attempt_start = 0.0

    def status(self, status: Any) -> None:
        if not self.first_attempt_start and status.stage == "generating":
            self.first_attempt_start = time.perf_counter()

    def event(self, text: str) -> None:
        if text.startswith(("functional ", "optimization ")):
            self.attempts.append(time.perf_counter())


def script(rounds: int, path: Path) -> Path:
    fast = {k: v for k, v in DEMO[5].items() if k != "expect"}
    analysis = {k: v for k, v in DEMO[4].items() if k != "expect"}
    lines = [fast] + [analysis, fast] * rounds
    path.write_text("".join(json.dumps(line) + "\n" for line in lines))
    return path


def run_once(rounds: int, workdir: Path) -> dict[str, Any]:
    evaluator = InstantEvaluator()

    @contextmanager
    def factory(*args: Any) -> Iterator[InstantEvaluator]:
        yield evaluator

    settings = Settings(
        backend="cpu", runs_dir=workdir / "runs",
        llm=LLMSettings(model=f"replay:{script(rounds, workdir / 'script.jsonl')}"),
        budget=BudgetSettings(optimization_rounds=rounds, patience=rounds, max_llm_calls=10 * rounds + 10),
    )
    progress = TimedProgress()
    app = App()
    with RunStore(settings.runs_dir) as store:
        plan = plan_run(settings, PROBLEM, store=store)
        started = time.perf_counter()
        result = start_run(app, plan, store, progress, evaluator_factory=factory)
        total = time.perf_counter() - started
        calls = store.llm_calls(result.run_id)
        steps = store.steps(result.run_id)
    # per attempt: from the previous attempt's end to this one's, minus evaluator and LLM time in that window
    llm_by_step = [c.seconds for c in calls]
    windows = [b - a for a, b in zip([progress.first_attempt_start] + progress.attempts[:-1], progress.attempts)]
    llm_per_attempt = [llm_by_step[0]] + [llm_by_step[i] + llm_by_step[i + 1] for i in range(1, len(llm_by_step), 2)]
    evaluator_share = evaluator.seconds / len(windows)
    overhead = [w - llm - evaluator_share for w, llm in zip(windows, llm_per_attempt)]

    start = time.perf_counter()
    with RunStore(settings.runs_dir) as store:
        resume_run(app, store, result.run_id, TimedProgress(), evaluator_factory=factory)
    replay = time.perf_counter() - start
    return {"total_s": total, "attempts": len(windows), "steps": len(steps), "overhead_ms": [o * 1e3 for o in overhead],
            "setup_s": progress.first_attempt_start - started, "end_s": started + total - progress.attempts[-1],
            "replay_s": replay, "llm_s": sum(llm_by_step), "evaluator_s": evaluator.seconds}


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--rounds", type=int, default=30, help="optimization rounds (attempts = rounds + 1)")
    args = parser.parse_args()
    with tempfile.TemporaryDirectory() as tmp:
        figures = run_once(args.rounds, Path(tmp))
    per = sorted(figures["overhead_ms"])
    p90 = per[int(0.9 * (len(per) - 1))]
    print(f"loop overhead per attempt ({figures['attempts']} attempts, {figures['steps']} steps; "
          f"LLM and evaluator time removed):")
    print(f"  median {statistics.median(per):7.2f} ms   p90 {p90:7.2f} ms   max {per[-1]:7.2f} ms   "
          f"goal <= 50 ms")
    print(f"  once per run: set-up {figures['setup_s'] * 1e3:.0f} ms (problem, lowering with the machine's peaks, "
          f"store, baselines), end {figures['end_s'] * 1e3:.0f} ms (report.md, speedup.png, best.py)")
    print(f"  whole run {figures['total_s']:.2f} s, of which LLM calls {figures['llm_s'] * 1e3:.1f} ms and "
          f"evaluator {figures['evaluator_s'] * 1e3:.1f} ms")
    print(f"  resume of the finished run (replays all {figures['steps']} steps, then writes the outputs): "
          f"{figures['replay_s']:.2f} s")


if __name__ == "__main__":
    main()
