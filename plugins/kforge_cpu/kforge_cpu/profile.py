"""``kforge_profile`` for the ``cpu`` backend, run in the worker on a candidate that passed verification.

What it measures, for the analyst:

* the forward's median time, the time inside each Numba kernel (its share of the forward; the rest is PyTorch
  and Python) and the ``aten::`` operators the forward still runs;
* per kernel and compiled signature: Numba's parallel diagnostics (loops parallelised, fused, serialised,
  allocations hoisted) and the vectorisation of its innermost loops read from the generated assembly;
* achieved memory bandwidth and matmul flop rate against this machine's measured peaks (``kforge_core.workload``
  counts the work, ``peaks`` measures the peaks);
* thread scaling: the forward's median at 1, 2, 4, ... Numba threads.

Everything is returned as metrics on ``KernelMetrics`` (one record for the forward, one per kernel) plus a text
report in ``raw``; ``kforge_summarize_profile`` reads the metrics.
"""

from __future__ import annotations

import os
from dataclasses import dataclass
from types import ModuleType
from typing import Any, Callable, TypeVar

from kforge_core.hookspecs import hookimpl
from kforge_core.plugin_api import candidate_class, candidate_class_name, import_candidate, problem_floor
from kforge_core.records import Backend, Candidate, KernelMetrics, ProfileResult, StageContext

from .backend import CpuOptions, cpu_options
from .diagnostics import ParallelReport, parallel_report
from .kernels import is_parallel, kernel_name, numba_kernels, uses_fastmath
from .machine import read_machine_facts
from .numba_errors import clean
from .peaks import MachinePeaks, machine_peaks
from .problem_instance import private_rng, problem_module
from .timing import clocked_kernels, median_seconds, page_faults_per_call, thread_scaling, torch_ops
from .vectorization import Vectorization, kernel_vectorization, supported

FORWARD = "ModelNew.forward"


@dataclass(frozen=True)
class Workload:
    bytes: int
    flops: int


@dataclass(frozen=True)
class ForwardTimes:
    seconds: float  # median
    kernel_share: float  # fraction of the forward inside Numba kernels
    page_faults: float  # per forward
    scaling: list[tuple[int, float]]  # (threads, median seconds)
    threads: int


@dataclass(frozen=True)
class KernelStudy:
    """One kernel, timed and read."""

    name: str
    signature: str
    seconds_per_forward: float
    share_of_forward: float
    calls_per_forward: float
    parallel: bool
    fastmath: bool
    report: ParallelReport | None  # None when not parallel=True
    vectorization: Vectorization | None  # None off x86-64
    problems: tuple[str, ...] = ()  # readings that failed


def _setup(candidate: Candidate, context: StageContext) -> tuple[ModuleType, Callable[[], Any], Workload]:
    """The candidate's module, its model's forward as a thunk, and the problem's floor (bytes and FLOPs)."""
    import torch

    module = import_candidate(candidate, context.workdir)
    problem = problem_module(context.problem)
    with private_rng():
        init_inputs, inputs = problem.get_init_inputs(), problem.get_inputs()
        model = candidate_class(module, candidate_class_name(context)).cls(*init_inputs)

    def forward() -> Any:
        with torch.no_grad():
            return model(*inputs)

    forward()  # the first call, outside every measurement
    floor = problem_floor(context.problem)
    return module, forward, Workload(floor.bytes, floor.flops or 0)


T = TypeVar("T")


def _read(analysis: Callable[[], T], problems: list[str], what: str) -> T | None:
    """Run one reading of a compiled kernel; a failure of the reading (not of the candidate) is noted, so that a
    correct candidate never fails because Numba's report or its assembly looked unexpected."""
    try:
        return analysis()
    except Exception as exc:  # noqa: BLE001
        problems.append(f"{what} unavailable: {type(exc).__name__}: {exc}")
        return None


def _study(name: str, kernel: Any, seconds: float, share: float, calls: float) -> KernelStudy:
    signature = kernel.signatures[0] if kernel.signatures else None
    problems: list[str] = []
    report = _read(lambda: parallel_report(kernel, signature), problems, "parallel diagnostics") \
        if signature is not None and is_parallel(kernel) else None
    vector = _read(lambda: kernel_vectorization(kernel, signature), problems, "vectorisation") \
        if signature is not None and supported() else None
    text = "(" + ", ".join(str(t) for t in signature) + ")" if signature is not None else "(never called)"
    return KernelStudy(kernel_name(kernel), text, seconds, share, calls, is_parallel(kernel),
                       uses_fastmath(kernel), report, vector, tuple(problems))


def _kernel_metrics(study: KernelStudy) -> KernelMetrics:
    metrics: list[tuple[str, float | str]] = [
        ("signature", study.signature),
        ("calls_per_forward", study.calls_per_forward),
        ("share_of_forward_pct", 100 * study.share_of_forward),
        ("parallel", "yes" if study.parallel else "no"),
        ("fastmath", "yes" if study.fastmath else "no"),
    ]
    if study.report is not None:
        r = study.report
        metrics += [("parallel_loops", r.parallel), ("serialized_loops", r.serialized), ("fused_loops", r.fused),
                    ("hoisted_allocations", "; ".join(r.hoisted_allocations))]
    v = study.vectorization
    if v is None:
        metrics.append(("vectorization", "not checked (x86-64 only)" if not supported() else "not checked"))
    else:
        metrics += [("vectorization", v.verdict), ("simd_bits", v.width_bits),
                    ("vector_loops", v.count("vector") + v.count("mixed")), ("scalar_loops", v.count("scalar")),
                    ("remainder_loops", v.count("remainder")), ("f32_f64_conversions", v.conversions),
                    ("float64_ops", v.float64_ops), ("loops_with_calls", v.loops_with_calls),
                    ("scalar_loop_ops", " ".join(sorted({m for loop in v.loops if loop.kind == "scalar"
                                                         for m in loop.mnemonics})))]
    return KernelMetrics(study.name, study.seconds_per_forward * 1e6, tuple(metrics))


def _forward_metrics(times: ForwardTimes, work: Workload, peaks: MachinePeaks | None,
                     ops: list[tuple[str, int]]) -> KernelMetrics:
    seconds = times.seconds
    achieved_gbs = work.bytes / seconds / 1e9
    metrics: list[tuple[str, float | str]] = [
        ("threads", times.threads),
        ("cpus", read_machine_facts().cpus),
        ("load_average", os.getloadavg()[0]),
        ("numba_share_pct", 100 * times.kernel_share),
        ("page_faults", times.page_faults),
        ("bytes", work.bytes),
        ("achieved_gbs", achieved_gbs),
        ("flops", work.flops),
    ]
    if work.flops:
        metrics.append(("achieved_gflops", work.flops / seconds / 1e9))
    if peaks is not None:
        metrics += [("page_fault_us", peaks.first_touch.page_fault_us), ("peak_gbs", peaks.bandwidth_gbs),
                    ("bandwidth_pct_of_peak", 100 * achieved_gbs / peaks.bandwidth_gbs),
                    ("peak_gflops", peaks.matmul_gflops)]
        if work.flops:
            metrics.append(("flops_pct_of_peak", 100 * work.flops / seconds / 1e9 / peaks.matmul_gflops))
    metrics += [(f"time_us_{n}_threads", t * 1e6) for n, t in times.scaling]
    metrics.append(("torch_ops", ", ".join(f"{name} x{count}" for name, count in ops)))
    return KernelMetrics(FORWARD, seconds * 1e6, tuple(metrics))


def _raw(forward: KernelMetrics, studies: list[KernelStudy], workdir: Any) -> str:
    lines = [f"== {FORWARD}: {forward.duration_us:.1f} us median =="]
    lines += [f"{key}: {value:.4g}" if isinstance(value, float) else f"{key}: {value}"
              for key, value in forward.metrics]
    for study in studies:
        lines.append(f"\n== kernel {study.name}{study.signature}: {study.seconds_per_forward * 1e6:.1f} us "
                     f"per forward, {study.calls_per_forward:g} call(s) ==")
        if study.report is not None:
            lines += ["-- Numba parallel diagnostics --", clean(study.report.text, workdir)]
        if study.vectorization is not None:
            lines += ["-- innermost loops in the assembly --", study.vectorization.describe()]
        lines += list(study.problems)
    return "\n".join(lines)


def profile_candidate(candidate: Candidate, context: StageContext, options: CpuOptions) -> ProfileResult:
    import numba

    module, forward, work = _setup(candidate, context)
    kernels = numba_kernels(module)
    reps = options.profile_repetitions
    with clocked_kernels(module, kernels) as clock:
        clocked = clock.run(forward, list(kernels), reps)
    studies = [_study(name, kernel, clocked.kernel_seconds[name], clocked.kernel_share[name], clocked.calls[name])
               for name, kernel in kernels.items()]
    studies.sort(key=lambda s: s.seconds_per_forward, reverse=True)
    threads = numba.get_num_threads()
    times = ForwardTimes(
        seconds=median_seconds(forward, reps),
        kernel_share=clocked.total_share,
        page_faults=page_faults_per_call(forward, min(reps, 3)),
        scaling=thread_scaling(forward, threads, reps) if options.thread_scaling and threads > 1 else [],
        threads=threads,
    )
    ops = torch_ops(forward)
    problems: list[str] = []  # measuring the peaks can fail under a tight memory limit: report without them
    peaks = _read(lambda: machine_peaks(context.cache_dir), problems, "the machine's measured peaks")
    forward_record = _forward_metrics(times, work, peaks, ops)
    kernel_records = [_kernel_metrics(s) for s in studies]
    return ProfileResult(
        tool="numba",
        kernels=(forward_record, *kernel_records),
        raw="\n".join([_raw(forward_record, studies, context.workdir), *problems]),
        ops=tuple(name for name, _ in ops),
    )


@hookimpl
def kforge_profile(backend: Backend, candidate: Candidate, context: StageContext) -> ProfileResult | None:
    return profile_candidate(candidate, context, cpu_options(context.options))
