"""Shared by the harness benchmarks: a backend for any torch device, problems of a chosen size, candidates.

``bench-cpu`` and ``bench-cuda`` are served by the core's generic stages (this module is their plugin, loaded by
name, so workers load it too: the benchmark's directory is on their path). ``--backend NAME`` uses an installed
plugin's backend instead.
"""

from __future__ import annotations

import argparse
import dataclasses
import os
import tempfile
import time
from pathlib import Path

from kforge_core import Availability, Backend, hookimpl
from kforge_core.harness import Harness
from kforge_core.plugins import PluginSelection
from kforge_core.problem import load_problem
from kforge_core.records import Candidate
from kforge_core.settings import HarnessSettings, Settings
from kforge_nvidia.device import CudaDevice

BENCH_CPU = Backend(name="bench-cpu", programming_model="PyTorch", device="cpu")
BENCH_CUDA = Backend(name="bench-cuda", programming_model="PyTorch", device="cuda", device_class=CudaDevice)


@hookimpl
def kforge_register_backends(register):
    register(BENCH_CPU)
    register(BENCH_CUDA)


@hookimpl
def kforge_backend_availability(backend):
    if backend.name == BENCH_CPU.name:
        return Availability.yes("the host CPU")
    if backend.name == BENCH_CUDA.name:
        import torch

        return Availability.yes() if torch.cuda.is_available() else Availability.no("no CUDA device")
    return None


ELEMENTWISE = '''
import torch
import torch.nn as nn


class Model(nn.Module):
    def __init__(self, scale):
        super().__init__()
        self.scale = scale

    def forward(self, x):
        return torch.relu(x) * self.scale


def get_inputs():
    return [torch.randn({n}, {n})]


def get_init_inputs():
    return [2.0]
'''

GEMM = '''
import torch
import torch.nn as nn


class Model(nn.Module):
    def __init__(self, n):
        super().__init__()
        self.linear = nn.Linear(n, n)

    def forward(self, x):
        return torch.relu(self.linear(x))


def get_inputs():
    return [torch.randn({n}, {n})]


def get_init_inputs():
    return [{n}]
'''

# Weights far larger than a call's inputs and outputs, as in KernelBench's 2_ShallowWideMLP (8.6 GB of weights,
# 16 MiB of inputs and outputs): where an evaluation keeps copies of the model, its peak shows them
WIDE = '''
import torch
import torch.nn as nn


class Model(nn.Module):
    def __init__(self, n):
        super().__init__()
        self.layers = nn.Sequential(nn.Linear(n, n), nn.ReLU(), nn.Linear(n, n))

    def forward(self, x):
        return self.layers(x)


def get_inputs():
    return [torch.randn(8, {n})]


def get_init_inputs():
    return [{n}]
'''

# The same computation as the reference, in PyTorch operators: the benchmarks measure the harness, so the
# candidate's kind does not matter; it runs under the "report" cheat policy so that it is timed.
CANDIDATES = {
    "elementwise": '''
import torch


class ModelNew(torch.nn.Module):
    def __init__(self, scale):
        super().__init__()
        self.scale = scale

    def forward(self, x):
        return torch.relu(x) * self.scale
''',
    "gemm": '''
import torch
import torch.nn as nn


class ModelNew(nn.Module):
    def __init__(self, n):
        super().__init__()
        self.linear = nn.Linear(n, n)

    def forward(self, x):
        return torch.relu(x @ self.linear.weight.t() + self.linear.bias)
''',
    "wide": '''
import torch
import torch.nn as nn


class ModelNew(nn.Module):
    def __init__(self, n):
        super().__init__()
        self.layers = nn.Sequential(nn.Linear(n, n), nn.ReLU(), nn.Linear(n, n))

    def forward(self, x):
        first, _, second = self.layers
        return torch.relu(x @ first.weight.t() + first.bias) @ second.weight.t() + second.bias
''',
}
PROBLEMS = {"elementwise": ELEMENTWISE, "gemm": GEMM, "wide": WIDE}


def arguments(description: str) -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(description=description)
    parser.add_argument("--device", choices=["cpu", "cuda"], default="cpu",
                        help="run on this device with the core's generic stages (bench-cpu, bench-cuda)")
    parser.add_argument("--backend", help="an installed plugin's backend instead (its device is used)")
    parser.add_argument("--problem", choices=sorted(PROBLEMS), default="elementwise")
    parser.add_argument("--problem-file", type=Path, help="a KernelBench problem file instead (its Model, renamed "
                        "ModelNew, is the candidate: the same computation, so what is measured is the harness)")
    parser.add_argument("--size", type=int, help="N of the N x N input (default: 1024 on the CPU, 8192 on GPUs)")
    parser.add_argument("--repetitions", type=int, default=20, help="timed runs per evaluation")
    parser.add_argument("--warmup", type=int, default=3)
    parser.add_argument("--trials", type=int, default=5)
    parser.add_argument("--threads", type=int, help="OMP_NUM_THREADS for the workers (CPU runs on a busy machine: "
                        "a descheduled OpenMP thread stalls every parallel region)")
    return parser


def backend_and_plugins(args: argparse.Namespace) -> tuple[Backend, PluginSelection]:
    if args.backend:
        from kforge_core.plugins import build_plugin_manager
        from kforge_core.registry import BackendRegistry

        selection = PluginSelection.from_env()
        return BackendRegistry(build_plugin_manager(selection)).get(args.backend).backend, selection
    backend = BENCH_CUDA if args.device == "cuda" else BENCH_CPU
    return backend, PluginSelection(entry_points=False, modules=("harness_common",))


def make_harness(args: argparse.Namespace, root: Path, **harness_changes) -> tuple[Harness, Candidate]:
    if args.threads:
        os.environ["OMP_NUM_THREADS"] = os.environ["MKL_NUM_THREADS"] = str(args.threads)  # workers inherit it
    backend, selection = backend_and_plugins(args)
    settings = Settings(cache_dir=root / "cache", harness=HarnessSettings(
        trials=args.trials, warmup=args.warmup, repetitions=args.repetitions, cheat_policy="report",
        **harness_changes))
    if args.problem_file:
        source = args.problem_file.read_text()
        harness = Harness(backend=backend, problem=load_problem(args.problem_file), settings=settings,
                          plugins=selection)
        return harness, Candidate.from_source(f"{source}\n\nModelNew = Model\n", label=args.problem_file.stem)
    size = args.size or (1024 if backend.device == "cpu" else 8192)
    if args.problem == "gemm" and not args.size:
        size = 256 if backend.device == "cpu" else 4096
    root.mkdir(parents=True, exist_ok=True)
    path = root / f"{args.problem}_{size}.py"
    path.write_text(PROBLEMS[args.problem].format(n=size))
    harness = Harness(backend=backend, problem=load_problem(path), settings=settings, plugins=selection)
    return harness, Candidate.from_source(CANDIDATES[args.problem], label=f"{args.problem}-{size}")


def cold_evaluations(args: argparse.Namespace, root: Path, count: int, **harness_changes) -> list[float]:
    """Seconds of ``count`` evaluations of the candidate, each in a new worker (no warm worker, no spare, no
    baseline), under ``harness_changes``."""
    harness, candidate = make_harness(args, root, warm_workers=False, spare_workers=0, baselines=(),
                                      **harness_changes)
    seconds = []
    with harness:
        for i in range(count):
            began = time.perf_counter()
            verdict = harness.evaluate(dataclasses.replace(candidate, label=f"{candidate.label}-{i}"))
            seconds.append(time.perf_counter() - began)
            if not verdict.correct:
                raise SystemExit(f"the candidate was not correct ({harness_changes}): {verdict.message}")
    return seconds


def scratch() -> tempfile.TemporaryDirectory:
    return tempfile.TemporaryDirectory(prefix="kforge-bench-")
