"""Record the test fixtures that only a GPU machine can produce: Nsight Compute CSV of real kernels and
compute-sanitizer output of a real out-of-bounds access. Run on the GPU machine:

    python plugins/kforge_nvidia/tests/record_fixtures.py OUT_DIR

then copy OUT_DIR's files into plugins/kforge_nvidia/tests/fixtures/. It prints each profile's summary too.
"""

from __future__ import annotations

import subprocess
import sys
import tempfile
from pathlib import Path

HERE = Path(__file__).resolve().parent
EXAMPLES = HERE.parents[1] / "kforge_cuda" / "kforge_cuda" / "examples"
CUDA_CANDIDATES = HERE.parents[1] / "kforge_cuda" / "tests" / "candidates"
TRITON_EXAMPLE = HERE.parents[2] / "kforge_core" / "languages" / "triton" / "example"

GEMM_PROBLEM = '''
import torch
import torch.nn as nn

class Model(nn.Module):
    def forward(self, a, b):
        return a @ b

def get_inputs():
    return [torch.randn(4096, 4096, dtype=torch.float16), torch.randn(4096, 4096, dtype=torch.float16)]

def get_init_inputs():
    return []
'''
# Not a fair candidate (it calls PyTorch): it is here to record a tensor-core kernel's metrics.
GEMM_CANDIDATE = '''
import torch.nn as nn

class ModelNew(nn.Module):
    def forward(self, a, b):
        return a @ b
'''


def _problem(path: Path):
    """The record without running the reference on the CPU (an fp16 GEMM there takes minutes)."""
    from kforge_core.records import Problem, ValueSpec

    return Problem(path.stem, path, path.read_text(), (), (), (ValueSpec("tensor", (1,), "float32"),), 0)


def _language(backend_name: str):
    """The backend and its stages module (its build routes)."""
    import kforge_cuda.stages
    import kforge_triton.stages
    from kforge_cuda import CUDA
    from kforge_triton import TRITON

    return {"cuda": (CUDA, kforge_cuda.stages), "triton": (TRITON, kforge_triton.stages)}[backend_name]


def _stage_inputs(backend_name: str, problem_path: Path, source: str, cache: Path):
    from kforge_core.records import Candidate, StageContext

    backend, stages = _language(backend_name)
    candidate = Candidate.from_source(source)
    context = StageContext(_problem(problem_path), Path(tempfile.mkdtemp()), None, cache)
    compiled = stages.compile_candidate(backend, candidate, context)
    print(f"compile {backend_name} {problem_path.name}: ok={compiled.ok} {compiled.seconds:.2f}s {compiled.log}")
    return backend, candidate, context


def record_profile(out: Path, name: str, backend_name: str, problem_path: Path, source: str, cache: Path) -> None:
    from kforge_nvidia.ncu_summary import summarize_kernels
    from kforge_nvidia.profile_stage import profile_candidate

    backend, candidate, context = _stage_inputs(backend_name, problem_path, source, cache)
    profile = profile_candidate(backend, candidate, context, _language(backend_name)[1].build_routes)
    if profile is None:
        print(f"{name}: ncu gave no profile")
        return
    csv_text = profile.raw.split("\n", 1)[1] if profile.raw.startswith("#") else profile.raw
    (out / f"{name}.csv").write_text(csv_text)
    print(f"--- {name}: {len(profile.kernels)} kernels; raw starts: {profile.raw[:120]!r}")
    print(summarize_kernels(profile.kernels))


def record_memcheck(out: Path, cache: Path) -> None:
    from kforge_cuda.options import CudaOptions
    from kforge_cuda.stages import build_routes
    from kforge_nvidia.builds import cache_root
    from kforge_nvidia.child import child_command
    from kforge_nvidia.sanitize import trim_memcheck
    from kforge_nvidia.toolchain import find_tool

    source = (CUDA_CANDIDATES / "cuda_out_of_bounds.py").read_text()
    backend, candidate, context = _stage_inputs("cuda", EXAMPLES / "cuda_problem.py", source, cache)
    command = [find_tool("compute-sanitizer") or "compute-sanitizer", "--tool", "memcheck", "--show-backtrace",
               "device", "--print-limit", "20", *child_command(
                   workdir=context.workdir, entry=candidate.entry, problem=context.problem.path,
                   cache_root=cache_root(context), routes=build_routes, options=CudaOptions(),
                   mode="sanitize")]
    env = {"PYTORCH_NO_CUDA_MEMORY_CACHING": "1"}
    import os

    done = subprocess.run(command, capture_output=True, text=True, env={**os.environ, **env}, timeout=300)
    raw = done.stdout + "\n" + done.stderr
    (out / "memcheck_out_of_bounds.txt").write_text(raw)
    print("--- memcheck (trimmed):\n" + trim_memcheck(raw))


def main() -> None:
    out = Path(sys.argv[1])
    out.mkdir(parents=True, exist_ok=True)
    cache = Path(tempfile.mkdtemp(prefix="kforge-fixtures-"))
    gemm_problem = Path(tempfile.mkdtemp()) / "gemm_fp16.py"
    gemm_problem.write_text(GEMM_PROBLEM)
    record_profile(out, "ncu_cuda_softmax", "cuda", EXAMPLES / "cuda_problem.py",
                   (EXAMPLES / "cuda_solution.py").read_text(), cache)
    record_profile(out, "ncu_triton_rmsnorm", "triton", TRITON_EXAMPLE / "problem.py",
                   (TRITON_EXAMPLE / "solution.py").read_text(), cache)
    record_profile(out, "ncu_cublas_gemm_fp16", "cuda", gemm_problem, GEMM_CANDIDATE, cache)
    record_memcheck(out, cache)


if __name__ == "__main__":
    main()
