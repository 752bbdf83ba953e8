"""Peak memory and preparation time per problem, on the side of a candidate's worker and on the referee's, against
the footprint of one call of the reference (its inputs and outputs).

    python benchmarks/reference_memory.py --device cuda --problems 8      # the GPU machine
    python benchmarks/reference_memory.py --device cpu  --problems 4      # the CPU (peaks are the process's RSS)
    python benchmarks/reference_memory.py --device cpu  wide_relu.py      # named problem files

Each problem is measured in a fresh process, so no problem sees another's memory. A candidate's worker prepares the
problem's data (``reference_data``: model, timing pool, no answer); the referee computes the expected outputs
(``expected_for``). On a harness without a referee (before the reference left the candidate's process), the one
preparation there is measured as the worker's, and the referee's columns say "-". Printed per problem: one call's
footprint, each side's preparation seconds and peak memory (device memory on a GPU, resident memory growth on the
CPU, sampled every millisecond), and the peak as a multiple of the footprint.
"""

from __future__ import annotations

import argparse
import json
import subprocess
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
SUITE = ROOT / "examples" / "suites" / "basics" / "problems"

MEASURE = r'''
import json, sys, time
import torch
from kforge_core.devices import make_device
from kforge_core.problem import load_problem
from kforge_core.records import Backend
from kforge_core.settings import HarnessSettings
from kforge_core.harness.worker import reference as side
from kforge_core.values import flatten_output, tensor_bytes

path, device_type = sys.argv[1], sys.argv[2]
backend = Backend(name="measure", programming_model="torch", device=device_type)
device = make_device(backend)
device.start()
settings = HarnessSettings()
problem = load_problem(path)
on_gpu = device_type != "cpu"

import os, threading

def rss():
    with open("/proc/self/statm") as statm:
        return int(statm.read().split()[1]) * os.sysconf("SC_PAGE_SIZE")

def peak(step):
    """The step's result, seconds and peak memory above what was held before it: device memory on a GPU, the
    process's resident memory on the CPU (sampled every millisecond)."""
    if on_gpu:
        getattr(torch, device_type).reset_peak_memory_stats()
        base = getattr(torch, device_type).memory_allocated()
    else:
        base, top, done = rss(), [0], threading.Event()
        def sample():
            while not done.is_set():
                top[0] = max(top[0], rss())
                time.sleep(0.001)
        sampler = threading.Thread(target=sample, daemon=True)
        sampler.start()
    start = time.perf_counter()
    result = step()
    device.synchronize()
    seconds = time.perf_counter() - start
    if on_gpu:
        highest = getattr(torch, device_type).max_memory_allocated()
    else:
        done.set()
        sampler.join()
        highest = max(top[0], rss())
    return result, seconds, max(highest - base, 0)

data, worker_s, worker_peak = peak(lambda: side.reference_data(problem, device, settings, backend))
inputs = side.seeded_inputs(data.module, settings.seed, data.device)
with torch.no_grad():
    model = side.build_model(data.module.Model, data.init_inputs, settings.seed, data.device)
    outputs = flatten_output(model(*inputs))[0]
footprint = tensor_bytes(inputs) + tensor_bytes(outputs)
del inputs, outputs, model
try:
    from kforge_core.harness.worker.expected import expected_for
except ImportError:
    referee_s = referee_peak = None
else:
    _, referee_s, referee_peak = peak(lambda: expected_for(problem, device, settings, backend))
print(json.dumps({"footprint": footprint, "worker_s": worker_s, "worker_peak": worker_peak,
                  "referee_s": referee_s, "referee_peak": referee_peak, "pool": len(data.pool)}))
'''


def measure(path: Path, device: str) -> dict:
    done = subprocess.run([sys.executable, "-c", MEASURE, str(path), device], capture_output=True, text=True)
    if done.returncode != 0:
        return {"error": (done.stderr.strip().splitlines() or ["failed"])[-1]}
    return json.loads(done.stdout.strip().splitlines()[-1])


def mib(n: float | None) -> str:
    return "-" if n is None else f"{n / (1 << 20):8.1f}"


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("files", nargs="*", type=Path, help="problem files (default: the basics suite)")
    parser.add_argument("--device", default="cpu", help="torch device type: cpu, cuda, xpu, mps")
    parser.add_argument("--problems", type=int, default=4, help="how many of the basics suite's problems")
    parser.add_argument("--json", action="store_true", help="print every figure as JSON too")
    args = parser.parse_args()
    files = args.files or sorted(SUITE.rglob("*.py"))[:args.problems]
    print(f"{'problem':32} {'call MiB':>9} {'worker s':>9} {'peak MiB':>9} {'x call':>7} {'referee s':>10} "
          f"{'peak MiB':>9} {'x call':>7} {'pool':>5}")
    results = {}
    for path in files:
        found = results[path.stem] = measure(path, args.device)
        if "error" in found:
            print(f"{path.stem:32} {found['error']}")
            continue
        call = found["footprint"] or 1
        referee_x = "-" if found["referee_peak"] is None else f"{found['referee_peak'] / call:7.2f}"
        referee_s = "-" if found["referee_s"] is None else f"{found['referee_s']:10.3f}"
        print(f"{path.stem:32} {mib(found['footprint']):>9} {found['worker_s']:9.3f} {mib(found['worker_peak']):>9} "
              f"{found['worker_peak'] / call:7.2f} {referee_s:>10} {mib(found['referee_peak']):>9} {referee_x:>7} "
              f"{found['pool']:5d}")
    if args.json:
        print(json.dumps(results, indent=2))


if __name__ == "__main__":
    main()
