"""The settings KForge reads, one frozen dataclass per config table, every field with its default.

``kforge.toml`` (or ``[tool.kforge]`` in ``pyproject.toml``) mirrors this structure::

    backend = "cuda"

    [harness]
    trials = 5

    [llm]
    model = "openai:gpt-4.1"

    [backends.cuda]
    arch = "sm_90a"

How files, the environment and flags combine is :mod:`kforge_core.config`'s job.
"""

from __future__ import annotations

import os
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Literal

from .precision_contract import DEFAULT as DEFAULT_PRECISION
from .precision_contract import PrecisionContract, contract_named


def _default_cache_dir() -> Path:
    return Path.home() / ".cache" / "kforge"


def default_build_jobs() -> int:
    """Builds ahead at once by default: a core each, one core left for the evaluation itself, at most 16."""
    return max(1, min(16, (os.cpu_count() or 2) - 1))


MIN_PROCESSES = 64  # harness.max_processes below this would stop an honest worker's thread pools
SPARES_FROM_CORES = 8  # from this many cores up, two spare workers by default


def default_max_processes() -> int:
    """Processes and threads one worker may have at once by default: 1024, or 16 a core on larger machines. A
    worker's session held 51 at its peak on an H200's 16-core host (8 on 2 cores): about 3 a core (Python, torch's
    and Numba's thread pools, the lifeline, the compile threads); a build runs a compiler's few processes a core."""
    return max(1024, 16 * (os.cpu_count() or 1))


def default_spare_workers() -> int:
    """Spare workers by default: two where the machine has the cores to start them beside an evaluation (a
    worker's start, Python, torch and the device, takes seconds: a suite whose candidates are rejected one after
    another, each replacing its worker, outran a single spare), one elsewhere."""
    return 2 if (os.cpu_count() or 1) >= SPARES_FROM_CORES else 1


BUILDERS_FROM_CORES = 8  # from this many cores up, the torch.compile baselines of coming problems build side by side
MOST_BUILDERS = 4


def default_baseline_builders() -> int:
    """Builders of coming problems' ``torch.compile`` baselines by default: one per four cores (each compiles in
    its own process), at most :data:`MOST_BUILDERS`, none below :data:`BUILDERS_FROM_CORES` cores (their builds
    would share the few cores with the evaluation)."""
    cores = os.cpu_count() or 1
    return min(MOST_BUILDERS, cores // 4) if cores >= BUILDERS_FROM_CORES else 0


@dataclass(frozen=True)
class HarnessSettings:
    """``[harness]``: how candidates are checked and timed (docs/eval.md explains each)."""

    trials: int = 5
    seed: int = 42
    # dtype name -> (atol, rtol) the user chose; what is not named here comes from kforge_core.tolerances' rule
    tolerances: dict[str, tuple[float, float]] = field(default_factory=dict)
    atol: float | None = None  # for every dtype, over everything else (--atol)
    rtol: float | None = None  # (--rtol)
    precision: str = DEFAULT_PRECISION  # the precision contract: fp32, tf32, fp16 or bf16
    candidate_class: str = "ModelNew"  # the class a candidate defines (ModelNew falls back to Model)
    warmup: int = 3
    repetitions: int = 20  # timed runs, at most: a long call gets fewer (timing_target_ms)
    # the timed runs of each callable under each timer aim at this much of the call's time: a call of the length L
    # gets ceil(timing_target_ms / L) runs, never fewer than 8 (the outside clock's lower bound needs them) nor more
    # than repetitions (docs/timing.md, "Runs in proportion"); 0: always repetitions
    timing_target_ms: float = 100.0
    # the timers measured beside the headline (harness.timer): "auto" every one the device has for a call shorter
    # than timing_target_ms / 8, the headline alone for a longer one; "all" every one always; "headline" never.
    # Beside an events headline alone, the device's clock guards it on each callable's first two runs
    beside_timers: Literal["auto", "all", "headline"] = "auto"
    compile_timeout_s: float = 600.0  # one build: importing a candidate, a JIT, load_inline
    call_timeout_s: float = 0.0  # one call of forward; 0: follows the reference's time (harness.stage_timeouts)
    verify_timeout_s: float = 0.0  # 0: follows the problem, like timing_timeout_s
    profile_timeout_s: float = 600.0
    timing_timeout_s: float = 0.0
    startup_timeout_s: float = 300.0  # starting a worker: Python, torch, the device, the reference's outputs
    problem_budget_s: float = 900.0  # kforge bench: one problem's whole evaluation; past it, budget_exceeded; 0: none
    memory_limit_mb: int = 0  # 0: the worker's address space is not limited (only applied on the CPU device)
    file_size_limit_mb: int = 1024  # the largest file a worker may write (a flood of output stops here)
    # the memory a worker's hidden directories (/tmp, /dev/shm, home, runs directory) may hold in all, as tmpfs
    # mounts in the sandbox; each worker's share follows its problem's size, up to this
    scratch_limit_mb: int = 1024
    # what one candidate may add to the build caches; builds are kept, anything else it added is removed at the end
    cache_quota_mb: int = 2048
    # processes and threads a worker (or a build ahead) may have at once (16 a core, at least 1024, by default)
    max_processes: int = field(default_factory=default_max_processes)
    # a cgroup per worker (memory.max, pids.max) where this machine lets KForge make one: "auto" or "off"
    cgroups: Literal["auto", "off"] = "auto"
    output_limit_kb: int = 64
    cheat_policy: Literal["strict", "report"] = "strict"
    precision_policy: Literal["strict", "report"] = "strict"
    # the shapes a candidate must also hold at (docs/verification.md, "Shapes"): "strict" fails a candidate wrong at
    # one of the problem's shape variants (flag shape_specific), "report" only flags it, "off" runs none
    shapes: Literal["strict", "report", "off"] = "strict"
    time_shapes: bool = False  # a correct candidate is timed at each shape variant too (speedup per shape)
    baselines: tuple[str, ...] = ("eager", "compile")
    warm_workers: bool = True
    # workers kept started ahead of need when warm_workers is on (2 from SPARES_FROM_CORES cores up, else 1)
    spare_workers: int = field(default_factory=default_spare_workers)
    # every timed call's outputs are checked against the reference: this many elements of each output, drawn by the
    # KForge process after the call returned (every element of a smaller output)
    timed_check_elements: int = 65536
    input_pool_mb: int = 1024  # device memory for the distinct input sets the timed runs cycle through
    l2_flush_bytes: int = 0  # 0: twice the device's L2, at least the device's floor (GPUs: 256 MiB); CPU: none
    # candidates built ahead at once while another is evaluated (a bench: its whole suite); 0: no building ahead
    prebuild_jobs: int = field(default_factory=default_build_jobs)
    prebuild_during_timing: bool = True  # builds go on while another candidate is timed (never on the host CPU)
    # torch.compile's (Inductor's) compile threads in a worker: 1 compiles in the worker's own process; 0 leaves
    # PyTorch's choice (a pool of subprocesses, one per core, started by every worker that imports Inductor)
    compile_threads: int = 1
    # on an accelerator, processes that build the torch.compile baselines of the problems coming next, side by side,
    # into Inductor's cache (harness/host/baseline_builds.py); 0: the baseline worker builds each in its turn
    baseline_builders: int = field(default_factory=default_baseline_builders)
    # baselines kept in <state_dir>/baselines across runs: "use" reads and writes them, "refresh" measures again
    # and writes, "off" neither reads nor writes
    baseline_cache: Literal["use", "refresh", "off"] = "use"
    # workers in Linux namespaces (docs/trust.md): "auto" where the machine allows it, "required": refuse without
    sandbox: Literal["auto", "off", "required"] = "auto"
    # how a worker starts (kforge_core/harness/host/worker_start.py): "fork" from a template process that imported
    # torch once, "exec" as a new interpreter, "auto" forks on Linux and executes elsewhere
    worker_start: Literal["auto", "fork", "exec"] = "auto"
    # the headline figure of verdicts, speedups, fast_p and plots: "wall", "events" or "device" (docs/timing.md);
    # the others are measured and reported too where the device has them
    timer: Literal["wall", "events", "device"] = "wall"
    # an accelerator's workers on one NUMA node, every timed block (candidate's and baselines') on one CPU of it kept
    # for timing (kforge_core/harness/cpu_placement.py); off: wherever the OS puts them
    cpu_placement: bool = True

    def __post_init__(self) -> None:
        for name in ("trials", "repetitions", "timed_check_elements"):
            if getattr(self, name) < 1:
                raise ValueError(f"harness.{name} must be >= 1")
        for name in ("warmup", "spare_workers", "memory_limit_mb", "l2_flush_bytes",
                     "prebuild_jobs", "compile_threads", "baseline_builders"):
            if getattr(self, name) < 0:
                raise ValueError(f"harness.{name} must be >= 0")
        for name in ("compile_timeout_s", "profile_timeout_s", "startup_timeout_s"):
            if getattr(self, name) <= 0:
                raise ValueError(f"harness.{name} must be > 0")
        if self.timing_target_ms < 0:
            raise ValueError("harness.timing_target_ms must be >= 0 (0: always harness.repetitions timed runs)")
        for name in ("call_timeout_s", "verify_timeout_s", "timing_timeout_s", "problem_budget_s"):
            if getattr(self, name) < 0:
                raise ValueError(f"harness.{name} must be >= 0 (0: follows the problem)")
        for name in ("atol", "rtol"):
            if getattr(self, name) is not None and getattr(self, name) < 0:
                raise ValueError(f"harness.{name} must be >= 0")
        if not self.candidate_class.isidentifier():
            raise ValueError(f"harness.candidate_class {self.candidate_class!r} is not a Python class name")
        if self.output_limit_kb < 1 or self.file_size_limit_mb < 1 or self.input_pool_mb < 1:
            raise ValueError("harness.output_limit_kb, file_size_limit_mb and input_pool_mb must be >= 1")
        if self.scratch_limit_mb < 16 or self.cache_quota_mb < 1:
            raise ValueError("harness.scratch_limit_mb must be >= 16 and harness.cache_quota_mb >= 1")
        if self.max_processes < MIN_PROCESSES:
            raise ValueError(f"harness.max_processes must be >= {MIN_PROCESSES} (a worker runs about 3 threads a "
                             "core: torch's and Numba's pools)")
        if self.cgroups not in ("auto", "off"):
            raise ValueError(f"harness.cgroups {self.cgroups!r}: use auto or off")
        if self.worker_start not in ("auto", "fork", "exec"):
            raise ValueError(f"harness.worker_start {self.worker_start!r}: use auto, fork or exec")
        contract_named(self.precision)  # an unknown contract is a ValueError that lists the known ones
        if self.shapes not in ("strict", "report", "off"):
            raise ValueError(f"harness.shapes {self.shapes!r}: use strict, report or off")
        if self.timer not in ("wall", "events", "device"):
            raise ValueError(f"harness.timer {self.timer!r}: use wall, events or device")
        unknown = set(self.baselines) - {"eager", "compile"}
        if unknown:
            raise ValueError(f"harness.baselines: unknown baseline(s) {sorted(unknown)}; use eager and/or compile")

    @property
    def contract(self) -> PrecisionContract:
        return contract_named(self.precision)


@dataclass(frozen=True)
class LLMSettings:
    """``[llm]``: which models the two agents use and how they are called."""

    model: str = ""  # PROVIDER:MODEL, for example "openai:gpt-4.1" or "replay:script.jsonl"
    analyst_model: str = ""  # empty: the same as model
    base_url: str = ""  # for openai-like servers (vLLM, llama.cpp)
    temperature: float = 0.2
    max_output_tokens: int = 8192
    request_timeout_s: float = 600.0
    max_retries: int = 4  # retries of one call after a timeout, a rate limit (429) or a server error (5xx)
    retry_initial_s: float = 2.0  # the first backoff; each retry waits twice as long, up to retry_max_s
    retry_max_s: float = 60.0
    # model name ("gpt-4.1") or full spec ("openai:gpt-4.1") -> (USD per million input tokens, per million output)
    prices: dict[str, tuple[float, float]] = field(default_factory=dict)

    def __post_init__(self) -> None:
        if self.max_retries < 0:
            raise ValueError("llm.max_retries must be >= 0")
        if self.retry_initial_s < 0 or self.retry_max_s < self.retry_initial_s:
            raise ValueError("llm.retry_initial_s must be >= 0 and <= llm.retry_max_s")


@dataclass(frozen=True)
class BudgetSettings:
    """``[budget]``: when a run stops."""

    functional_attempts: int = 5  # generation attempts to reach a first correct candidate
    optimization_rounds: int = 5
    optimization_attempts: int = 3  # attempts per optimization round (the first, then repairs of failures)
    patience: int = 2  # optimization rounds without a gain before stopping
    min_gain: float = 0.02  # a new best must be this much faster (0.02: 2% lower median runtime)
    max_llm_calls: int = 50  # requests to providers, retries included
    max_tokens: int = 2_000_000  # input plus output tokens, both agents
    max_cost_usd: float = 0.0  # 0: no limit
    max_wall_s: float = 0.0  # 0: no limit

    def __post_init__(self) -> None:
        for name in ("functional_attempts", "optimization_attempts", "patience", "max_llm_calls"):
            if getattr(self, name) < 1:
                raise ValueError(f"budget.{name} must be >= 1")
        if self.optimization_rounds < 0 or self.min_gain < 0:
            raise ValueError("budget.optimization_rounds and budget.min_gain must be >= 0")


@dataclass(frozen=True)
class LoopSettings:
    """``[loop]``: what ends optimization besides the budget."""

    # optimization stops once the best candidate reaches this fraction of the problem's speed of light on the
    # device (its fraction of the bound: docs/limits.md); 0: never on that account
    sol_target: float = 0.9
    # the search (docs/run.md, "Searching wider"): candidates asked for at once in each functional attempt and each
    # optimization round (1: one at a time), and the best candidates kept as the parents of the next round
    width: int = 1
    keep: int = 1
    # the devices a round's candidates are evaluated on, one timed candidate per device at a time (empty: the
    # device as KForge's process sees it)
    devices: tuple[int, ...] = ()
    # the round's candidate m (from 1) asks at [llm] temperature + (m - 1) * this, at most 1, where the provider
    # takes a temperature per request
    temperature_step: float = 0.1

    def __post_init__(self) -> None:
        if not 0 <= self.sol_target <= 1:
            raise ValueError("loop.sol_target must be between 0 and 1")
        if self.width < 1 or self.keep < 1:
            raise ValueError("loop.width and loop.keep must be >= 1")
        if len(set(self.devices)) != len(self.devices) or any(d < 0 for d in self.devices):
            raise ValueError("loop.devices must be distinct device indices such as [0, 1]")
        if self.temperature_step < 0:
            raise ValueError("loop.temperature_step must be >= 0")


@dataclass(frozen=True)
class AnalysisSettings:
    """``[analysis]``: what the performance-analysis agent sees besides the backend's profile summary."""

    # pictures shown with every analysis prompt, after the profile's own: screenshots of a GUI profiler
    # (Xcode's GPU capture, Nsight) taken by the user; PNG, JPEG, GIF or WebP
    images: tuple[Path, ...] = ()


@dataclass(frozen=True)
class RetrievalSettings:
    """``[retrieval]``: kernels of earlier runs (``RUNS_DIR/retrieval.db``) shown to the generation agent."""

    references: str = "auto"  # "auto": the top_k related kernels of the index, when it has any; "none": never
    top_k: int = 3
    embed_model: str | None = None  # "PROVIDER:MODEL": an embedding model re-ranks BM25's candidates; unset: BM25 alone

    def __post_init__(self) -> None:
        if self.references not in ("auto", "none"):
            raise ValueError(f"retrieval.references must be 'auto' or 'none', not {self.references!r}")
        if self.top_k < 0:
            raise ValueError("retrieval.top_k must be >= 0")


@dataclass(frozen=True)
class Settings:
    """All settings. ``backends`` holds each backend's raw options table, parsed by :meth:`backend_options`."""

    backend: str = "cpu"
    runs_dir: Path = Path("kforge-runs")
    cache_dir: Path = field(default_factory=_default_cache_dir)
    # KForge's own state, kept out of every worker's reach (the baseline cache and its key): never inside the cache
    # directory, which workers write; None: beside it, "<cache_dir>-state"
    state_dir: Path | None = None
    prompts_dir: Path | None = None
    harness: HarnessSettings = field(default_factory=HarnessSettings)
    llm: LLMSettings = field(default_factory=LLMSettings)
    budget: BudgetSettings = field(default_factory=BudgetSettings)
    loop: LoopSettings = field(default_factory=LoopSettings)
    analysis: AnalysisSettings = field(default_factory=AnalysisSettings)
    retrieval: RetrievalSettings = field(default_factory=RetrievalSettings)
    backends: dict[str, dict[str, Any]] = field(default_factory=dict)
    sources: tuple[str, ...] = field(default=(), metadata={"internal": True})  # where settings came from

    @property
    def host_state_dir(self) -> Path:
        """``state_dir``, or ``<cache_dir>-state`` beside the cache directory when it is not set."""
        if self.state_dir is not None:
            return self.state_dir
        return self.cache_dir.with_name(self.cache_dir.name + "-state")

    def backend_options(self, backend: Any) -> Any:
        """The backend's options dataclass, built from ``[backends.<name>]`` over its defaults."""
        from .typed_tables import parse_table

        table = self.backends.get(backend.name, {})
        if backend.options_type is None:
            if table:
                from .errors import KForgeError

                raise KForgeError(
                    f"[backends.{backend.name}] sets {sorted(table)}, but backend {backend.name!r} takes no options"
                )
            return None
        return parse_table(backend.options_type, table, where=f"backends.{backend.name}", source=self._origin())

    def _origin(self) -> str:
        return ", ".join(self.sources) or "defaults"
