"""The cuda and triton single-shot examples on this GPU: build time (cold, cached), correctness against the
reference and runtime against PyTorch eager and torch.compile.

    python benchmarks/cuda_examples.py [--no-compile-baseline]

Builds go through the plugin's own compile stage (a fresh cache, then the same source again in a new process,
each with torch imported and CUDA initialised first, as in a warm worker; the stage includes importing the
candidate, which imports Triton for the triton example, and one warm-up forward);
timing is ``triton.testing.do_bench`` (CUDA events, L2 cleared between runs, median of the repetitions).
"""

from __future__ import annotations

import argparse
import json
import subprocess
import sys
import tempfile
from pathlib import Path

EXAMPLES = Path(__file__).resolve().parents[1] / "plugins" / "kforge_cuda" / "kforge_cuda" / "examples"


def compile_once(backend: str, cache: str) -> dict:
    """Run the compile stage in this process as a warm worker would: torch imported, CUDA initialised."""
    import torch

    torch.zeros(1, device="cuda")
    from kforge_core.problem import load_problem
    from kforge_core.records import Candidate, StageContext
    import importlib

    stages = importlib.import_module(f"kforge_{backend}.stages")  # kforge_cuda.stages, kforge_triton.stages
    backend_record = importlib.import_module(f"kforge_{backend}.backend").__dict__[backend.upper()]

    problem = load_problem(EXAMPLES / f"{backend}_problem.py")
    candidate = Candidate.from_source((EXAMPLES / f"{backend}_solution.py").read_text())
    workdir = Path(tempfile.mkdtemp())
    result = stages.compile_candidate(backend_record, candidate, StageContext(problem, workdir, None, Path(cache)))
    return {"ok": result.ok, "seconds": result.seconds, "cached": result.cached, "log": result.log}


def compile_in_new_process(backend: str, cache: str) -> dict:
    code = f"import json, sys; sys.path.insert(0, {str(Path(__file__).parent)!r}); import cuda_examples as b; " \
           f"print(json.dumps(b.compile_once({backend!r}, {cache!r})))"
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True).stdout
    return json.loads(out.strip().splitlines()[-1])


def measure(backend: str, with_compile: bool) -> dict:
    import torch
    import triton.testing

    from kforge_core.candidate_module import import_candidate
    from kforge_core.problem import import_problem_module
    from kforge_core.records import Candidate

    problem = import_problem_module(EXAMPLES / f"{backend}_problem.py", f"bench_problem_{backend}")
    candidate = Candidate.from_source((EXAMPLES / f"{backend}_solution.py").read_text())
    module = import_candidate(candidate, Path(tempfile.mkdtemp()))
    torch.manual_seed(0)
    reference = problem.Model(*problem.get_init_inputs()).cuda()
    model = module.ModelNew(*problem.get_init_inputs()).cuda()
    model.load_state_dict(reference.state_dict(), strict=False)
    errors = []
    with torch.no_grad():
        for seed in range(3):
            torch.manual_seed(100 + seed)
            inputs = [x.cuda() for x in problem.get_inputs()]
            expected, got = reference(*inputs), model(*inputs)
            errors.append((got - expected).abs().max().item())
            assert torch.allclose(got, expected, atol=1e-4, rtol=1e-4), f"{backend}: max abs error {errors[-1]}"
        inputs = [x.cuda() for x in problem.get_inputs()]
        times = {
            "eager": triton.testing.do_bench(lambda: reference(*inputs), warmup=50, rep=300, return_mode="median"),
            "candidate": triton.testing.do_bench(lambda: model(*inputs), warmup=50, rep=300, return_mode="median"),
        }
        if with_compile:
            compiled = torch.compile(reference)
            compiled(*inputs)
            times["compile"] = triton.testing.do_bench(lambda: compiled(*inputs), warmup=50, rep=300,
                                                       return_mode="median")
    return {"max_abs_error": max(errors), "ms": times}


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--no-compile-baseline", action="store_true")
    args = parser.parse_args()
    import torch

    print(f"GPU: {torch.cuda.get_device_name()}, torch {torch.__version__}")
    rows = []
    for backend in ("cuda", "triton"):
        cache = tempfile.mkdtemp(prefix="kforge-cache-")
        cold = compile_in_new_process(backend, cache)
        cached = compile_in_new_process(backend, cache)
        assert cold["ok"] and cached["ok"], (cold, cached)
        result = measure(backend, not args.no_compile_baseline)
        rows.append((backend, cold, cached, result))
    print(f"\n{'backend':8} {'build cold s':>12} {'build cached s':>14} {'max err':>9} {'eager ms':>9} "
          f"{'compile ms':>10} {'ours ms':>8} {'vs eager':>8} {'vs compile':>10}")
    for backend, cold, cached, result in rows:
        ms = result["ms"]
        compiled = ms.get("compile")
        print(f"{backend:8} {cold['seconds']:12.2f} {cached['seconds']:14.3f} {result['max_abs_error']:9.1e} "
              f"{ms['eager']:9.4f} {compiled if compiled else float('nan'):10.4f} {ms['candidate']:8.4f} "
              f"{ms['eager'] / ms['candidate']:7.2f}x "
              f"{(compiled / ms['candidate']) if compiled else float('nan'):9.2f}x")


if __name__ == "__main__":
    main()
