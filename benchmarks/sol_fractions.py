"""How close to the speed of light KForge says the eager reference, ``torch.compile`` and a solution come, per problem;
and whether the bound and the device's peaks hold up where vendor figures say what a library reaches.

KForge evaluates the problems with ``kforge bench --solutions ... --json`` (both baselines measured beside each
solution, under the timer given: the bound is a device-time bound, so ``events`` or ``device`` on a GPU) and reads
each verdict's place against the bound: the fraction of ``sol_ms`` the eager reference, the compiled one and the
solution reach, which roof binds, and the SOL score.

``--self-check`` writes two problems whose reference is a vendor library at its best, evaluates their references
(the solution is the reference itself, under the ``report`` cheat policy) and checks their fractions where vendor
figures put them: a large fp16/bf16 GEMM (cuBLAS) at 60% of the tensor-core peak or more, a large copy-like
elementwise at 80% of the memory bandwidth or more. Below that, the bound or the peaks are wrong. On the host CPU
(``--backend cpu``) it runs the same problems, smaller, and reports without judging (its peaks are measured).

``--ncu N`` runs Nsight Compute on the first N correct solutions (``kforge eval --profile``: the cuda backend
collects the Speed Of Light section's throughputs) and prints each kernel set's memory and compute throughput, as
percentages of the device's peaks and weighted by duration, beside KForge's fraction.

    python benchmarks/sol_fractions.py SUITE --solutions DIR --backend cuda --timer events --ncu 5 --json out.json
    python benchmarks/sol_fractions.py --self-check --backend cuda --timer events --ncu 2 --json self.json
    python benchmarks/sol_fractions.py --self-check --backend cpu
"""

from __future__ import annotations

import argparse
import json
import shlex
import subprocess
import sys
import tempfile
import time
from dataclasses import asdict, dataclass
from pathlib import Path

GEMM = '''
import torch
import torch.nn as nn


class Model(nn.Module):
    def forward(self, a, b):
        return a @ b


def get_inputs():
    return [torch.randn({n}, {n}, dtype=torch.{dtype}), torch.randn({n}, {n}, dtype=torch.{dtype})]


def get_init_inputs():
    return []
'''
COPY = '''
import torch
import torch.nn as nn


class Model(nn.Module):
    def forward(self, x):
        return x * 2.0


def get_inputs():
    return [torch.randn({n})]


def get_init_inputs():
    return []
'''
# name -> (source, what its eager fraction must reach on a GPU, what that says)
EXPECTED = {"gemm": 0.60, "copy": 0.80}
WHY = {"gemm": "a large GEMM in cuBLAS reaches 60-80% of the dense tensor-core peak",
       "copy": "a large copy reaches 80-93% of the peak memory bandwidth"}
GPU_SIZES = {"gemm": 8192, "copy": 1 << 28}  # 1.1 TFLOP; 1 GiB in and 1 GiB out
CPU_SIZES = {"gemm": 1024, "copy": 1 << 24}
SOL_METRICS = ("gpu__compute_memory_throughput.avg.pct_of_peak_sustained_elapsed",
               "sm__throughput.avg.pct_of_peak_sustained_elapsed")


@dataclass
class Row:
    """One problem against its speed of light."""

    problem: str
    correct: bool
    failure: str | None = None
    sol_ms: float | None = None
    binds: str = ""
    eager: float | None = None  # the eager reference's fraction of the bound
    compile: float | None = None
    solution: float | None = None
    score: float | None = None
    speedup_eager: float | None = None
    speedup_compile: float | None = None
    timer: str = ""
    ncu_memory_pct: float | None = None  # Nsight Compute's Speed Of Light throughputs, duration-weighted
    ncu_compute_pct: float | None = None
    ncu_note: str = ""  # where Nsight Compute gave no throughputs: which profiler answered, and its first words
    ncu_kernels: int = 0  # the kernels it profiled
    ncu_kernel_ms: float | None = None  # their durations added up, to hold against the call's timed figure
    ncu_dram_pct: float | None = None  # DRAM throughput alone (% of peak), duration-weighted
    ncu_dram_bytes: float | None = None  # bytes the kernels read from and wrote to DRAM
    expected: float | None = None  # the self-check's floor for the eager fraction
    verdict_file: str | None = None


def parse_args(argv: list[str] | None = None) -> argparse.Namespace:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("suite", type=Path, nargs="?", help="a directory of problem files (KernelBench's layout)")
    parser.add_argument("--solutions", type=Path, help="a directory or .jsonl of solutions, as kforge bench takes")
    parser.add_argument("--self-check", action="store_true",
                        help="evaluate a large GEMM's and a large copy's references and check their fractions")
    parser.add_argument("--backend", default="cuda")
    parser.add_argument("--timer", choices=("wall", "events", "device"),
                        help="the headline timer (default: events on a GPU, wall on the CPU)")
    parser.add_argument("--dtype", choices=("float16", "bfloat16"), default="bfloat16", help="the self-check GEMM's")
    parser.add_argument("--gemm-size", type=int, help="N of the self-check's N x N GEMM")
    parser.add_argument("--copy-elements", type=int, help="elements of the self-check's copy")
    parser.add_argument("--filter", dest="filters", action="append", default=[])
    parser.add_argument("--ncu", type=int, default=0, metavar="N",
                        help="profile the first N correct solutions with Nsight Compute (the cuda backend)")
    parser.add_argument("--kforge-args", default="", help="more kforge bench flags, in one string")
    parser.add_argument("--json", type=Path, help="write the rows (and kforge bench's summary) here")
    parser.add_argument("--bench-json", type=Path, help="write kforge bench's whole document (every verdict) here")
    args = parser.parse_args(argv)
    if args.self_check == (args.suite is not None):
        parser.error("give SUITE with --solutions, or --self-check")
    if args.suite is not None and args.solutions is None:
        parser.error("SUITE needs --solutions")
    if args.ncu < 0:
        parser.error("--ncu takes a count >= 0")
    args.timer = args.timer or ("wall" if args.backend == "cpu" else "events")
    return args


# ------------------------------------------------------------------------------------------------- problems


def write_self_check(root: Path, args: argparse.Namespace) -> tuple[Path, Path]:
    """The self-check's suite and solutions (each reference, renamed ModelNew) under ``root``."""
    sizes = CPU_SIZES if args.backend == "cpu" else GPU_SIZES
    gemm_n = args.gemm_size or sizes["gemm"]
    dtype = "float32" if args.backend == "cpu" else args.dtype
    sources = {"gemm": GEMM.format(n=gemm_n, dtype=dtype), "copy": COPY.format(n=args.copy_elements or sizes["copy"])}
    suite, solutions = root / "suite", root / "solutions"
    for name, source in sources.items():
        for folder, text in ((suite, source), (solutions, source.replace("class Model(", "class ModelNew("))):
            folder.mkdir(parents=True, exist_ok=True)
            (folder / f"{name}.py").write_text(text)
    return suite, solutions


# ----------------------------------------------------------------------------------------------- evaluating


def kforge(*arguments: str) -> dict:
    """``kforge ARGUMENTS --json``'s document; its progress reaches stderr as it comes."""
    command = [sys.executable, "-m", "kforge_core", *arguments, "--json"]
    finished = subprocess.run(command, stdout=subprocess.PIPE, text=True)
    if finished.returncode not in (0, 3):  # 3: a candidate was not correct, which the rows say
        sys.exit(f"{shlex.join(command)} failed ({finished.returncode})")
    return json.loads(finished.stdout)


def bench(suite: Path, solutions: Path, args: argparse.Namespace, runs: Path, policy: str = "strict") -> dict:
    filters = [flag for name in args.filters for flag in ("--filter", name)]
    return kforge("bench", str(suite), "--solutions", str(solutions), "--backend", args.backend, "--timer",
                  args.timer, "--baselines", "eager,compile", "--policy", policy, "--runs-dir", str(runs),
                  *filters, *shlex.split(args.kforge_args))


def rows_of(document: dict) -> list[Row]:
    """Each problem of a ``kforge bench --json`` document against its speed of light."""
    rows = []
    for problem in document["problems"]:
        baselines = dict(problem.get("baseline_fractions") or [])
        speedups = problem.get("speedups") or {}
        rows.append(Row(problem["problem"], bool(problem["correct"]), problem.get("failure"), problem.get("sol_ms"),
                        problem.get("sol_binds") or "", baselines.get("eager"), baselines.get("compile"),
                        problem.get("sol_fraction"), problem.get("sol_score"), speedups.get("eager"),
                        speedups.get("compile"), problem.get("timer") or "", verdict_file=problem.get("verdict_file")))
    return rows


def ncu_throughputs(verdict: dict) -> tuple[float | None, float | None]:
    """The profiled kernels' memory and compute throughput (% of peak, Nsight Compute's Speed Of Light section),
    each kernel weighted by its duration."""
    kernels = (verdict.get("profile") or {}).get("kernels") or []
    weighted, total = [0.0, 0.0], 0.0
    for kernel in kernels:
        metrics = dict(kernel.get("metrics") or [])
        values = [metrics.get(name) for name in SOL_METRICS]
        duration = float(kernel.get("duration_us") or 0.0)
        if duration <= 0 or any(not isinstance(v, (int, float)) for v in values):
            continue
        weighted = [w + duration * float(v) for w, v in zip(weighted, values)]
        total += duration
    return (weighted[0] / total, weighted[1] / total) if total else (None, None)


def dram_of(kernels: list[dict]) -> tuple[float | None, float | None, float | None]:
    """The kernels' durations added up (ms), their DRAM throughput (% of peak, duration-weighted) and the bytes they
    moved to and from DRAM."""
    total_us, weighted, moved = 0.0, 0.0, 0.0
    for kernel in kernels:
        metrics = dict(kernel.get("metrics") or [])
        duration = float(kernel.get("duration_us") or 0.0)
        total_us += duration
        weighted += duration * float(metrics.get("dram__throughput.avg.pct_of_peak_sustained_elapsed") or 0.0)
        moved += sum(float(metrics.get(name) or 0.0) for name in ("dram__bytes_read.sum", "dram__bytes_write.sum"))
    if not total_us:
        return None, None, None
    return total_us / 1e3, weighted / total_us, moved


def add_ncu(rows: list[Row], suite: Path, solutions_of: dict[str, Path], args: argparse.Namespace,
            count: int) -> None:
    """Nsight Compute's throughputs of the first ``count`` correct rows' solutions."""
    for row in [r for r in rows if r.correct][:count]:
        solution = solutions_of.get(row.problem)
        if solution is None:
            continue
        verdict = kforge("eval", str(suite / f"{row.problem}.py"), str(solution), "--backend", args.backend,
                         "--profile", "--policy", "report", "--baselines", "eager", "--timer", args.timer)
        row.ncu_memory_pct, row.ncu_compute_pct = ncu_throughputs(verdict)
        profile = verdict.get("profile") or {}
        kernels = profile.get("kernels") or []
        row.ncu_kernels = len(kernels)
        row.ncu_kernel_ms, row.ncu_dram_pct, row.ncu_dram_bytes = dram_of(kernels)
        if row.ncu_memory_pct is None:
            row.ncu_note = f"{profile.get('tool') or 'no profile'}: {(profile.get('raw') or verdict.get('message') or '')[:300]}"


def solution_files(document: dict, solutions: Path) -> dict[str, Path]:
    """Each problem's solution file, as the bench kept it (``problems/KEY/solution/``), else as laid out."""
    found = {}
    for problem in document["problems"]:
        key = problem["problem"]
        kept = Path(problem["verdict_file"]).parent / "solution" if problem.get("verdict_file") else None
        files = sorted(kept.glob("*.py")) if kept is not None and kept.is_dir() else []
        laid_out = solutions / f"{key}.py"
        found[key] = files[0] if files else laid_out if laid_out.is_file() else None
    return {key: path for key, path in found.items() if path is not None}


# -------------------------------------------------------------------------------------------------- output


def _pct(value: float | None) -> str:
    return f"{100 * value:.1f}%" if value is not None else "-"


def _num(value: float | None, fmt: str) -> str:
    return format(value, fmt) if value is not None else "-"


def table(rows: list[Row]) -> str:
    """The rows as a fixed-width table."""
    head = ("problem", "verdict", "binds", "sol ms", "eager", "compile", "solution", "SOL score", "x eager",
            "x compile", "ncu mem", "ncu SM")
    cells = [head] + [(
        r.problem, "correct" if r.correct else (r.failure or "failed"), r.binds or "-", _num(r.sol_ms, ".4g"),
        _pct(r.eager), _pct(r.compile), _pct(r.solution), _num(r.score, ".3f"), _num(r.speedup_eager, ".2f"),
        _num(r.speedup_compile, ".2f"),
        f"{r.ncu_memory_pct:.1f}%" if r.ncu_memory_pct is not None else "-",
        f"{r.ncu_compute_pct:.1f}%" if r.ncu_compute_pct is not None else "-") for r in rows]
    widths = [max(len(str(row[i])) for row in cells) for i in range(len(head))]
    lines = ["  ".join(str(cell).ljust(width) for cell, width in zip(row, widths)) for row in cells]
    lines.insert(1, "  ".join("-" * width for width in widths))
    return "\n".join(lines)


def judge(rows: list[Row], on_gpu: bool) -> list[str]:
    """The self-check's verdict on each of its problems: where the eager reference's fraction must be."""
    lines = []
    for row in rows:
        name = row.problem.rsplit("/", 1)[-1]
        expected = EXPECTED.get(name)
        row.expected = expected if on_gpu else None
        if expected is None:
            continue
        if not on_gpu:
            lines.append(f"{name}: eager at {_pct(row.eager)} of the bound (host CPU, measured peaks: not judged)")
        elif row.eager is None:
            lines.append(f"{name}: FAIL, no fraction (no bound, or the baseline failed)")
        else:
            verdict = "ok" if row.eager >= expected else "FAIL: the bound or the peaks are wrong"
            lines.append(f"{name}: eager at {_pct(row.eager)} of the bound, expected >= {expected:.0%} "
                         f"({WHY[name]}): {verdict}")
    return lines


def main(argv: list[str] | None = None) -> int:
    args = parse_args(argv)
    started = time.perf_counter()
    with tempfile.TemporaryDirectory(prefix="kforge-sol-") as scratch:
        root = Path(scratch)
        if args.self_check:
            suite, solutions = write_self_check(root, args)
            document = bench(suite, solutions, args, root / "runs", policy="report")
        else:
            suite, solutions = args.suite, args.solutions
            document = bench(suite, solutions, args, root / "runs")
        rows = rows_of(document)
        if args.bench_json:
            args.bench_json.write_text(json.dumps(document, indent=1))
        if args.ncu:
            add_ncu(rows, suite.resolve(), solution_files(document, solutions), args, args.ncu)
    print(table(rows))
    judged = judge(rows, args.backend != "cpu") if args.self_check else []
    for line in judged:
        print(line)
    summary = document.get("summary") or {}
    print(f"geomean SOL score {_num(summary.get('geomean_sol_score'), '.3f')}; {len(rows)} problems in "
          f"{time.perf_counter() - started:.0f} s ({args.timer} time)")
    if args.json:
        args.json.write_text(json.dumps({"rows": [asdict(r) for r in rows], "summary": summary, "checks": judged,
                                         "backend": args.backend, "timer": args.timer}, indent=2))
    return 1 if any("FAIL" in line for line in judged) else 0


if __name__ == "__main__":
    sys.exit(main())
