"""The program unitrace profiles: import a built candidate in its scratch directory and call its forward.

``python -m kforge_xpu.profile_child --workdir W --entry model_new.py --problem P --calls N [--device xpu]``
builds ``ModelNew`` and the problem's inputs on the device (the XPU), calls the forward twice with collection off (Triton finds its kernels in the
cache the compile stage filled; allocator and caches settle), then turns unitrace's conditional collection on
(``PTI_ENABLE_COLLECTION=1``) for ``N`` forwards and waits for the device before turning it off.
"""

from __future__ import annotations

import argparse
import os
import sys
from pathlib import Path
from typing import Sequence

from kforge_core.languages import triton as triton_language
from kforge_core.plugin_api import import_candidate
from kforge_core.records import Candidate

WARMUP_CALLS = 2


def profile_command(*, workdir: Path, entry: str, problem: Path, calls: int, device: str = "xpu") -> list[str]:
    return [sys.executable, "-m", "kforge_xpu.profile_child", "--workdir", str(workdir), "--entry", entry,
            "--problem", str(problem), "--calls", str(calls), "--device", device]


def main(argv: Sequence[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="python -m kforge_xpu.profile_child")
    for flag in ("--workdir", "--entry", "--problem"):
        parser.add_argument(flag, required=True)
    parser.add_argument("--calls", type=int, default=1)
    parser.add_argument("--device", default="xpu")
    args = parser.parse_args(argv)
    os.environ["PTI_ENABLE_COLLECTION"] = "0"

    import torch

    workdir = Path(args.workdir)
    os.chdir(workdir)
    module = import_candidate(Candidate.from_path(workdir / args.entry), workdir)
    model, inputs = triton_language.build_model_and_inputs(module, Path(args.problem), torch.device(args.device))
    synchronize = torch.get_device_module(args.device).synchronize
    with torch.no_grad():
        for _ in range(WARMUP_CALLS):
            model(*inputs)
        synchronize()
        os.environ["PTI_ENABLE_COLLECTION"] = "1"
        for _ in range(args.calls):
            model(*inputs)
        synchronize()
        os.environ["PTI_ENABLE_COLLECTION"] = "0"
    return 0


if __name__ == "__main__":
    sys.exit(main())
