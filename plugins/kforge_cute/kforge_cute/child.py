"""The program Nsight Compute runs: import a compiled candidate in its scratch directory and call it.

``python -m kforge_cute.child --workdir W --entry model_new.py --problem P --cache-root C --digest D --options JSON``
routes ``cute.compile`` through the same compile cache as the worker (so its kernels load from the disk cache
instead of compiling), warms up outside the profiled range, then calls ``forward`` between ``cudaProfilerStart``
and ``cudaProfilerStop`` (ncu runs with ``--profile-from-start off``, so only the candidate's forward is profiled).
"""

from __future__ import annotations

import argparse
import dataclasses
import importlib.util
import json
import os
import sys
from pathlib import Path
from typing import Sequence

from .options import CuteOptions


def child_command(*, workdir: Path, entry: str, problem: Path, cache_root: Path, digest: str,
                  options: CuteOptions) -> list[str]:
    """The command line of this program for one candidate."""
    return [sys.executable, "-m", "kforge_cute.child", "--workdir", str(workdir), "--entry", entry,
            "--problem", str(problem), "--cache-root", str(cache_root), "--digest", digest,
            "--options", json.dumps(dataclasses.asdict(options))]


def main(argv: Sequence[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="python -m kforge_cute.child")
    for flag in ("--workdir", "--entry", "--problem", "--cache-root", "--digest", "--options"):
        parser.add_argument(flag, required=True)
    args = parser.parse_args(argv)

    import torch

    from kforge_core.languages.triton import build_model_and_inputs

    from .compile_stage import start_session

    workdir = Path(args.workdir)
    os.chdir(workdir)
    start_session(args.digest, workdir, Path(args.cache_root), CuteOptions(**json.loads(args.options)))
    sys.path.insert(0, str(workdir))
    spec = importlib.util.spec_from_file_location("kforge_candidate_child", workdir / args.entry)
    assert spec is not None and spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    sys.modules[spec.name] = module
    spec.loader.exec_module(module)
    model, inputs = build_model_and_inputs(module, Path(args.problem), torch.device("cuda"))
    with torch.no_grad():
        for _ in range(2):  # compiles (or cache loads) and the allocator settle outside the profiled range
            model(*inputs)
        torch.cuda.synchronize()
        torch.cuda.profiler.start()
        model(*inputs)
        torch.cuda.synchronize()
        torch.cuda.profiler.stop()
    return 0


if __name__ == "__main__":
    sys.exit(main())
