"""The program ``xctrace`` records: import the candidate in its scratch directory and run its forward on the GPU.

``python -m kforge_metal.trace_child --workdir W --entry model_new.py --problem P --forwards N`` builds
``ModelNew`` and the problem's inputs on ``mps``, warms up outside the profiled forwards, then runs N forwards
under ``torch.mps.profiler.profile`` (PyTorch's own operations and copies become os_signpost intervals, each
waited for, so that they appear one by one on the trace's timeline).
"""

from __future__ import annotations

import argparse
import importlib.util
import os
import sys
from pathlib import Path
from typing import Sequence

from kforge_core.plugin_api import import_problem_module


def trace_child_command(workdir: Path, entry: str, problem: Path, forwards: int) -> list[str]:
    return [sys.executable, "-m", "kforge_metal.trace_child", "--workdir", str(workdir), "--entry", entry,
            "--problem", str(problem), "--forwards", str(forwards)]


def _import(path: Path, name: str):
    spec = importlib.util.spec_from_file_location(name, path)
    assert spec is not None and spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    sys.modules[name] = module
    spec.loader.exec_module(module)
    return module


def main(argv: Sequence[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="python -m kforge_metal.trace_child")
    for flag in ("--workdir", "--entry", "--problem"):
        parser.add_argument(flag, required=True)
    parser.add_argument("--forwards", type=int, default=10)
    args = parser.parse_args(argv)

    import torch

    workdir = Path(args.workdir)
    os.chdir(workdir)
    sys.path.insert(0, str(workdir))
    candidate = _import(workdir / args.entry, "kforge_candidate_traced")
    problem = import_problem_module(Path(args.problem), "kforge_problem_traced")
    torch.manual_seed(0)
    model = candidate.ModelNew(*problem.get_init_inputs()).to("mps")
    inputs = [v.to("mps") if isinstance(v, torch.Tensor) else v for v in problem.get_inputs()]
    with torch.no_grad():
        for _ in range(2):  # shaders compile and the allocator settles outside the profiled forwards
            model(*inputs)
        torch.mps.synchronize()
        with torch.mps.profiler.profile(mode="interval", wait_until_completed=True):
            for _ in range(args.forwards):
                model(*inputs)
            torch.mps.synchronize()
    return 0


if __name__ == "__main__":
    sys.exit(main())
