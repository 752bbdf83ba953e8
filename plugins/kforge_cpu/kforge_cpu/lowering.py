"""``kforge_lower`` for the ``cpu`` backend: the Numba programming model, this machine's facts and the example."""

from __future__ import annotations

import importlib.util
from importlib import resources
from pathlib import Path
from string import Template
from typing import Any

from kforge_core.hookspecs import hookimpl
from kforge_core.plugin_api import floor_bytes
from kforge_core.records import Backend, Example, Lowering, Problem

from .backend import CpuOptions, cpu_options
from .machine import read_machine_facts
from .peaks import machine_peaks

EXAMPLE_PROBLEM = "add_rmsnorm.py"
EXAMPLE_SOLUTION = "add_rmsnorm_numba.py"

FASTMATH_ALLOWED = (
    "`fastmath=True` is allowed and usually needed: it lets LLVM reassociate reductions (sums, max) across SIMD "
    "lanes. Results change in the last bits, well inside the float32 tolerance; avoid it only where the algorithm "
    "relies on exact IEEE behaviour (NaN/Inf tests)."
)
FASTMATH_DISABLED = (
    "`fastmath` is disabled in this configuration (`[backends.cpu] fastmath = false`): a candidate that uses it "
    "fails to compile. Reductions then keep their order and do not vectorise; split them by hand into several "
    "independent partial sums (for example 8 accumulators)."
)
SVML_PRESENT = "are vectorised through Intel SVML on this machine when `fastmath=True`."
SVML_ABSENT = (
    "are scalar function calls on this machine (Numba has no SVML here): a loop that calls them is not "
    "vectorised, and runs several times slower than PyTorch's vectorised ones. In a hot loop, write them in plain "
    "float32 arithmetic in an `@njit(inline=\"always\", fastmath=True)` helper instead, which vectorises: tanh and "
    "erf as rational approximations (Eigen's float32 ones, x P(x^2) / Q(x^2) on a clamped range, are within a few "
    "ulp), exp as 2^n exp(r) with n = floor(x log2(e) + 0.5), a degree-5 polynomial for exp(r) and 2^n from its "
    "bits (`np.int32((np.int32(n) + 127) << 23).view(np.float32)`). Hoist the calls that do not depend on the "
    "inner index."
)
BLAS_PRESENT = "`np.dot`/`@` inside `@njit` call BLAS here (SciPy is installed)."
BLAS_ABSENT = (
    "`np.dot`/`@` inside `@njit` fail to compile here: Numba needs SciPy for them, and it is not installed. In "
    "`forward`, NumPy's own `np.matmul(a, b, out=out)` calls the BLAS NumPy ships with (a transposed weight is a "
    "view: `weight.T`); then fuse the epilogue (bias, activation, scale) into one kernel over its output, with "
    "`parallel=False` where the output is small (a parallel loop's threads contend with BLAS's for the cores)."
)


def _package_text(name: str) -> str:
    return resources.files("kforge_cpu").joinpath(name).read_text()


def shipped_example() -> Example:
    return Example(
        problem=_package_text(f"example/{EXAMPLE_PROBLEM}"),
        solution=_package_text(f"example/{EXAMPLE_SOLUTION}"),
        note="One fused parallel pass over the rows replaces PyTorch's five passes over memory; "
        "float32 throughout so both inner loops vectorise.",
    )


def programming_model_text(options: CpuOptions, threads: int, svml: bool) -> str:
    return Template(_package_text("programming_model.md")).substitute(
        threads=threads,
        fastmath_rule=FASTMATH_ALLOWED if options.fastmath else FASTMATH_DISABLED,
        svml_rule=SVML_PRESENT if svml else SVML_ABSENT,
        blas_rule=BLAS_PRESENT if importlib.util.find_spec("scipy") else BLAS_ABSENT,
    )


def hardware_text(problem: Problem, threads: int, cache_dir: Path) -> str:
    import numba
    import numpy

    facts = read_machine_facts()
    peaks = machine_peaks(cache_dir)
    moved = floor_bytes(problem)
    floor_ms = moved / (peaks.bandwidth_gbs * 1e9) * 1e3
    return "\n".join([
        facts.describe(),
        f"Numba {numba.__version__} (NumPy {numpy.__version__}) runs parallel loops on {threads} threads "
        f"({peaks.threading_layer} threading layer); SVML: {'yes' if numba.config.USING_SVML else 'no'}",
        peaks.describe(),
        f"This problem reads its inputs and parameters and writes its outputs once in {moved / (1 << 20):.1f} MiB: at the measured "
        f"bandwidth that alone takes {floor_ms:.2f} ms, the floor for a memory-bound kernel.",
    ])


@hookimpl
def kforge_lower(backend: Backend, problem: Problem, options: Any, cache_dir: Path) -> Lowering | None:
    import numba

    options = cpu_options(options)
    threads = options.threads or numba.config.NUMBA_NUM_THREADS
    return Lowering(
        backend=backend.name,
        programming_model=programming_model_text(options, threads, numba.config.USING_SVML),
        hardware=hardware_text(problem, threads, cache_dir),
        example=shipped_example(),
    )
