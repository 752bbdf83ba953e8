"""Helpers for the loop's tests.

Unit tests of the loop's logic use a toy backend and a scripted evaluator that reads the outcome a test wants from
markers in the candidate's source (``# kforge-test: compile_error``, ``# kforge-test: ms=2.5``); they are injected
through the same parameters production uses (``App.extra_plugins``, ``evaluator_factory``). The end-to-end tests
(test_e2e_*.py) use the real harness and the real cpu backend instead.
"""

from __future__ import annotations

import json
import re
from contextlib import contextmanager
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Iterator

from kforge_core import hookimpl
from kforge_core.app import App
from kforge_core.harness import PrecisionReached, RuntimeStats
from kforge_core.records import (
    Availability, Backend, CompileResult, Example, Failure, Lowering, ProfileResult, ProfileSummary,
)
from kforge_core.tolerances import output_tolerances

EXAMPLES = Path(__file__).resolve().parents[2] / "examples"
PROBLEM = EXAMPLES / "problems" / "elementwise_gelu_scale.py"


# ------------------------------------------------------------------------------------------------- toy backend


class ToyBackendPlugin:
    """A backend that lowers with fixed text; its candidates are judged by :class:`ScriptedEvaluator`."""

    @hookimpl
    def kforge_register_backends(self, register):
        register(Backend(name="toy", programming_model="Toy kernels", device="cpu"))

    @hookimpl
    def kforge_backend_availability(self, backend):
        return Availability.yes("always") if backend.name == "toy" else None

    @hookimpl
    def kforge_lower(self, backend, problem):
        if backend.name != "toy":
            return None
        return Lowering(
            backend="toy", programming_model="Write ModelNew with toy kernels.", hardware="a toy machine",
            example=Example(problem="class Model: ...", solution="class ModelNew: ..."),
        )


def toy_app() -> App:
    return App(extra_plugins=(("toy", ToyBackendPlugin()),))


# ---------------------------------------------------------------------------------------- scripted evaluator


Stats = RuntimeStats  # the harness's own record: the loop reads its figure


@dataclass(frozen=True)
class FakeVerdict:
    """Has the attributes of ``kforge_core.harness.Verdict`` that the loop reads."""

    candidate: str
    candidate_digest: str
    compile: CompileResult
    runtime: Stats | None
    baselines: tuple
    speedups: tuple
    flags: tuple
    failure: Failure | None
    message: str
    profile: ProfileResult | None = None
    precision: PrecisionReached = field(default_factory=PrecisionReached)
    timer: str = "wall"
    figures: tuple = ()
    baseline_sources: tuple = ()
    speed_of_light: Any = None
    verify: Any = None  # the verify stage's result (its shape check): none here

    @property
    def correct(self) -> bool:
        return self.failure is None

    @property
    def best_speedup(self) -> float | None:
        return min(v for _, v in self.speedups) if self.speedups else None

    statistic = "median"

    @property
    def runtime_ms(self) -> float | None:
        return self.runtime.figure if self.runtime is not None else None

    @property
    def baselines_ms(self) -> tuple:
        return tuple((name, stats.figure) for name, stats in self.baselines)

    def to_json(self) -> dict:
        return {"candidate": self.candidate, "correct": self.correct,
                "failure": self.failure.value if self.failure else None, "message": self.message}


def _stats(ms: float) -> Stats:
    return Stats(ms, ms, 0.0, ms, 5)


@dataclass
class ScriptedEvaluator:
    baselines_ms: dict[str, float] = field(default_factory=lambda: {"eager": 10.0, "compile": 8.0})
    summary: ProfileSummary = field(default_factory=lambda: ProfileSummary(text="kernel k: memory bound, 80% of peak"))
    evaluated: list[str] = field(default_factory=list)
    profiled: list[str] = field(default_factory=list)
    fail_on: int | None = None  # raise on this evaluation (1-based), to stand for a killed process
    precision_bits: float = 21.5  # what a correct candidate reaches
    contract: str = "fp32"  # the run's, and the tolerances it resolves to, from the settings the factory gets
    tolerances: tuple = ()
    sol_ms: float | None = None  # the problem's speed of light (memory-bound), placed in every verdict when set

    def baselines(self) -> dict[str, Stats]:
        return {name: _stats(ms) for name, ms in self.baselines_ms.items()}

    def evaluate(self, candidate, *, profile: bool = False) -> FakeVerdict:
        (self.profiled if profile else self.evaluated).append(candidate.label)
        if self.fail_on is not None and len(self.evaluated) + len(self.profiled) == self.fail_on:
            raise KeyboardInterrupt  # what a kill looks like to the code that was running
        marker = re.search(r"kforge-test: (\S+)", candidate.source)
        what = marker.group(1) if marker else "ms=5.0"
        compile_ok = what != "compile_error"
        failure = {"compile_error": Failure.COMPILE, "wrong": Failure.MISMATCH}.get(what)
        ms = float(what.split("=")[1]) if what.startswith("ms=") else None
        speedups = tuple((n, b / ms) for n, b in self.baselines_ms.items()) if ms else ()
        return FakeVerdict(
            candidate=candidate.label, candidate_digest=candidate.digest,
            compile=CompileResult(ok=compile_ok, log="" if compile_ok else "TypingError: bad types at line 3",
                                  failure=None if compile_ok else Failure.COMPILE),
            runtime=_stats(ms) if ms else None,
            baselines=tuple((n, _stats(b)) for n, b in self.baselines_ms.items()),
            speedups=speedups, flags=(), failure=failure,
            message={"wrong": "trial 0: max abs error 0.31 > atol 1e-4", "compile_error": "compile failed"}.get(what, ""),
            profile=ProfileResult(tool="toy") if profile and ms else None,
            precision=PrecisionReached(self.contract, self.precision_bits if failure is None else None,
                                       tolerances=self.tolerances),
            speed_of_light=self._placed(ms if failure is None else None),
        )

    def _placed(self, ms: float | None) -> Any:
        """The verdict's place against a memory-bound bound of ``sol_ms`` (a 1 TB/s device)."""
        if self.sol_ms is None:
            return None
        from kforge_core.peaks import Peak, peaks_of
        from kforge_core.precision_contract import contract_named
        from kforge_core.speed_of_light import place, sol_bound
        from kforge_core.work_count import WorkCount

        peaks = peaks_of("Toy T1", Peak(1e12, "the T1 datasheet"), {})
        moved = int(self.sol_ms * 1e9)
        bound = sol_bound(moved, moved // 2, moved // 2, WorkCount(), peaks, contract_named("fp32"),
                          flushes_caches=True)
        return place(bound, "wall", ms, tuple(self.baselines_ms.items()))

    def summarize(self, profile: ProfileResult) -> ProfileSummary:
        return self.summary

    def factory(self):
        @contextmanager
        def open_evaluator(backend, problem, settings, *rest: Any) -> Iterator[ScriptedEvaluator]:
            self.contract = settings.harness.precision
            self.tolerances = output_tolerances(settings.harness, (o.dtype for o in problem.outputs))
            yield self
        return open_evaluator


# ------------------------------------------------------------------------------------------- replay scripts


def code_reply(marker: str, extra: str = "") -> str:
    return (f"Here is the kernel.\n\n```python\n# kforge-test: {marker}\nimport torch\n\n"
            f"class ModelNew(torch.nn.Module):\n    pass\n{extra}```\n")


def write_script(path: Path, entries: list[dict]) -> Path:
    path.write_text("".join(json.dumps(e) + "\n" for e in entries))
    return path


class RecordingProgress:
    """Keeps what the loop reports, for assertions."""

    def __init__(self) -> None:
        self.events: list[str] = []
        self.statuses: list = []

    def status(self, status) -> None:
        self.statuses.append(status)

    def event(self, text: str) -> None:
        self.events.append(text)


def toy_settings(tmp_path: Path, script: Path, **budget: Any):
    from kforge_core.settings import BudgetSettings, LLMSettings, Settings

    return Settings(
        backend="toy", runs_dir=tmp_path / "runs",
        llm=LLMSettings(model=f"replay:{script}", retry_initial_s=0.0, retry_max_s=0.0),
        budget=BudgetSettings(**budget),
    )


def run_toy(tmp_path: Path, script: Path, evaluator: ScriptedEvaluator, **budget: Any):
    """A whole run on the toy backend; returns (result, progress)."""
    from kforge_core.loop.session import plan_run, start_run
    from kforge_core.store import RunStore

    settings = toy_settings(tmp_path, script, **budget)
    progress = RecordingProgress()
    with RunStore(settings.runs_dir) as store:
        plan = plan_run(settings, PROBLEM, store=store)
        result = start_run(toy_app(), plan, store, progress, evaluator_factory=evaluator.factory())
    return result, progress
