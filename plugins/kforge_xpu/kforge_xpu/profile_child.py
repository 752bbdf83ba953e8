"""The program unitrace profiles: import a built candidate in its scratch directory and call its forward.

``python -m kforge_xpu.profile_child --workdir W --entry model_new.py --problem P --calls N`` builds ``ModelNew``
and the problem's inputs on the XPU, calls the forward twice with collection off (Triton finds its kernels in the
cache the compile stage filled; allocator and caches settle), then turns unitrace's conditional collection on
(``PTI_ENABLE_COLLECTION=1``) for ``N`` forwards and waits for the device before turning it off.
"""

from __future__ import annotations

import argparse
import importlib.util
import os
import sys
from pathlib import Path
from typing import Sequence

from kforge_core.languages import triton as triton_language

WARMUP_CALLS = 2


def profile_command(*, workdir: Path, entry: str, problem: Path, calls: int) -> list[str]:
    return [sys.executable, "-m", "kforge_xpu.profile_child", "--workdir", str(workdir), "--entry", entry,
            "--problem", str(problem), "--calls", str(calls)]


def _import_entry(workdir: Path, entry: str):
    sys.path.insert(0, str(workdir))
    spec = importlib.util.spec_from_file_location("kforge_candidate_profiled", workdir / entry)
    assert spec is not None and spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    sys.modules[spec.name] = module
    spec.loader.exec_module(module)
    return module


def main(argv: Sequence[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="python -m kforge_xpu.profile_child")
    for flag in ("--workdir", "--entry", "--problem"):
        parser.add_argument(flag, required=True)
    parser.add_argument("--calls", type=int, default=1)
    args = parser.parse_args(argv)
    os.environ["PTI_ENABLE_COLLECTION"] = "0"

    import torch

    workdir = Path(args.workdir)
    os.chdir(workdir)
    module = _import_entry(workdir, args.entry)
    model, inputs = triton_language.build_model_and_inputs(module, Path(args.problem), torch.device("xpu"))
    with torch.no_grad():
        for _ in range(WARMUP_CALLS):
            model(*inputs)
        torch.xpu.synchronize()
        os.environ["PTI_ENABLE_COLLECTION"] = "1"
        for _ in range(args.calls):
            model(*inputs)
        torch.xpu.synchronize()
        os.environ["PTI_ENABLE_COLLECTION"] = "0"
    return 0


if __name__ == "__main__":
    sys.exit(main())
