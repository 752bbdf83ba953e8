"""Build time of CUDA candidates: kforge_cuda's torch-free nvcc path and PyTorch's load_inline, side by side.

    python benchmarks/cuda_compile.py [--inline-kernels 2] [--plain-rebuilds 1]

Every build runs in a fresh Python process and only the build call is timed (imports excluded), as a KForge worker
would see it:
- load_cuda cold: a fresh cache; load_cuda cached: the same source under another name, in a new process.
- load_cuda parallel: four different kernels built at once in four processes, fresh cache (wall time).
- load_inline through KForge's compile stage (content-addressed): cold, then the same source under another name.
- plain load_inline under another name: what the same source costs again without the content-addressed cache.
"""

from __future__ import annotations

import argparse
import json
import statistics
import subprocess
import sys
import tempfile
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
SOFTMAX = (ROOT / "plugins/kforge_cuda/kforge_cuda/examples/cuda_solution.py").read_text()
SOFTMAX_SOURCE = SOFTMAX.split('CUDA_SOURCE = r"""', 1)[1].split('"""', 1)[0]
KERNELBENCH_SOFTMAX = (ROOT / "plugins/kforge_cuda/tests/candidates/kernelbench_softmax.py").read_text()


def relu_source(constant: int = 0) -> str:
    return f"""
#include <cuda_runtime.h>
#include <stdint.h>
__global__ void relu_kernel(const float* x, float* y, int64_t n) {{
    int64_t i = blockIdx.x * (int64_t)blockDim.x + threadIdx.x;
    if (i < n) y[i] = fmaxf(x[i], {constant}.0f);
}}
extern "C" cudaError_t relu(const float* x, float* y, int64_t n, cudaStream_t stream) {{
    relu_kernel<<<(unsigned)((n + 255) / 256), 256, 0, stream>>>(x, y, n);
    return cudaGetLastError();
}}
"""


def gelu_source() -> str:
    return relu_source().replace("fmaxf(x[i], 0.0f)", "0.5f * x[i] * (1.0f + erff(x[i] * 0.70710678f))")


INLINE_RELU = '''
from torch.utils.cpp_extension import load_inline
cuda_source = r"""
#include <torch/extension.h>
__global__ void relu_kernel(const float* x, float* y, int64_t n) {
    int64_t i = blockIdx.x * (int64_t)blockDim.x + threadIdx.x;
    if (i < n) y[i] = fmaxf(x[i], 0.0f);
}
torch::Tensor relu_cuda(torch::Tensor x) {
    auto y = torch::empty_like(x);
    int64_t n = x.numel();
    relu_kernel<<<(n + 255) / 256, 256>>>(x.data_ptr<float>(), y.data_ptr<float>(), n);
    return y;
}
"""
module = load_inline(name=NAME, cpp_sources="torch::Tensor relu_cuda(torch::Tensor x);",
                     cuda_sources=cuda_source, functions=["relu_cuda"], verbose=False)
'''

LOAD_CUDA_CHILD = """
import json, sys, time
from pathlib import Path
import torch
from kforge_cuda.build_config import build_config
from kforge_cuda.options import CudaOptions
from kforge_cuda import runtime
source, name, cache = json.loads(sys.argv[1])
config = build_config(CudaOptions(), Path(cache))
with runtime.build_session(config):
    start, wall_start = time.perf_counter(), time.time()
    runtime.load_cuda(source, name=name)
    print(json.dumps([time.perf_counter() - start, wall_start, time.time()]))
"""

INLINE_CHILD = """
import json, sys, time, os
from pathlib import Path
import torch, torch.utils.cpp_extension
from kforge_core.languages.cuda_cpp.inline_cache import cached_load_inline
code, name, cache, content_addressed = json.loads(sys.argv[1])
code = code.replace("name=NAME", "name=" + repr(name)).replace('name="row_softmax"', "name=" + repr(name))
namespace = {}
start = time.perf_counter()
if content_addressed:
    with cached_load_inline(Path(cache) / "inline", "nvcc", lambda item: None):
        exec(code, namespace)
else:
    exec(code, namespace)
print(json.dumps(time.perf_counter() - start))
"""


def child(script: str, *args, env_dir: str | None = None):
    import os

    env = dict(os.environ)
    if env_dir:
        env["TORCH_EXTENSIONS_DIR"] = env_dir
    done = subprocess.run([sys.executable, "-c", script, json.dumps(list(args))], capture_output=True, text=True,
                          env=env)
    if done.returncode != 0:
        raise RuntimeError(done.stderr[-3000:])
    value = json.loads(done.stdout.strip().splitlines()[-1])
    return value[0] if isinstance(value, list) else value


def bench_load_cuda(kernels: dict[str, str]) -> list[tuple[str, float, float]]:
    rows = []
    for label, source in kernels.items():
        cache = tempfile.mkdtemp(prefix="kf-nvcc-")
        cold = child(LOAD_CUDA_CHILD, source, label, cache)
        cached = child(LOAD_CUDA_CHILD, source, label + "_renamed", cache)
        rows.append((label, cold, cached))
    return rows


def bench_parallel(count: int = 4) -> tuple[float, float]:
    """(span from the first build's start to the last build's end, median build) for ``count`` different kernels
    built at once in ``count`` processes, fresh cache. Process start-up and imports are outside the span."""
    sources = [relu_source(constant) for constant in range(1, count + 1)]
    cache = tempfile.mkdtemp(prefix="kf-par-")
    procs = [subprocess.Popen([sys.executable, "-c", LOAD_CUDA_CHILD, json.dumps([s, f"k{i}", cache])],
                              stdout=subprocess.PIPE, text=True) for i, s in enumerate(sources)]
    results = [json.loads(p.communicate()[0].strip().splitlines()[-1]) for p in procs]
    span = max(end for _, _, end in results) - min(start for _, start, _ in results)
    return span, statistics.median(seconds for seconds, _, _ in results)


def bench_inline(count: int, plain_rebuilds: int) -> None:
    candidates = {"relu": INLINE_RELU, "softmax": KERNELBENCH_SOFTMAX}
    print("\nload_inline (KernelBench form, torch headers):")
    print(f"  {'kernel':10} {'cold s':>8} {'kforge cached s':>16} {'plain, other name s':>20}", flush=True)
    for index, (label, code) in enumerate(list(candidates.items())[:count]):
        cache = tempfile.mkdtemp(prefix="kf-inline-")
        torch_dir = tempfile.mkdtemp(prefix="kf-torch-ext-")
        cold = child(INLINE_CHILD, code, f"{label}_a", cache, True, env_dir=torch_dir)
        cached = child(INLINE_CHILD, code, f"{label}_b", cache, True, env_dir=torch_dir)
        plain = child(INLINE_CHILD, code, f"{label}_c", cache, False, env_dir=torch_dir) \
            if index < plain_rebuilds else None
        plain_text = f"{plain:20.2f}" if plain is not None else f"{'(not run)':>20}"
        print(f"  {label:10} {cold:8.2f} {cached:16.3f} {plain_text}", flush=True)


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--inline-kernels", type=int, default=2)
    parser.add_argument("--plain-rebuilds", type=int, default=1)
    args = parser.parse_args()
    import os

    import torch

    print(f"GPU: {torch.cuda.get_device_name()}, {os.cpu_count()} CPU cores, torch {torch.__version__}")
    rows = bench_load_cuda({"relu": relu_source(), "gelu": gelu_source(), "softmax": SOFTMAX_SOURCE})
    print("\nkforge_cuda load_cuda (nvcc, no torch headers):")
    print(f"  {'kernel':10} {'cold s':>8} {'cached s':>9}")
    for label, cold, cached in rows:
        print(f"  {label:10} {cold:8.2f} {cached:9.4f}")
    print(f"  median     {statistics.median(r[1] for r in rows):8.2f} {statistics.median(r[2] for r in rows):9.4f}")
    wall, single = bench_parallel()
    print(f"  4 different kernels built at once, one process each: {wall:.2f} s from the first start to the last "
          f"end (median build {single:.2f} s)", flush=True)
    bench_inline(args.inline_kernels, args.plain_rebuilds)


if __name__ == "__main__":
    main()
