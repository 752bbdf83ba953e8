"""Runs the xpu compile stage on candidate files in this process, on the host CPU (a CpuDevice given in the stage
context with the harness's policy around it, as a worker gives its device) and prints each CompileResult as JSON.
The compile-stage test runs it in a child process with TRITON_INTERPRET=1: ``python compile_check.py PROBLEM
CACHE_DIR FILE...``."""

from __future__ import annotations

import json
import sys
import tempfile
from pathlib import Path

from kforge_core.devices.cpu import CpuDevice
from kforge_core.devices.harness_device import HarnessDevice
from kforge_core.problem import load_problem
from kforge_core.records import Candidate, StageContext
from kforge_xpu.backend import XPU, XpuOptions
from kforge_xpu.compile_stage import compile_candidate
from kforge_xpu.device import XpuDevice


class CpuDeviceWithIntelFaults(CpuDevice):
    """The host CPU, reading errors as the Intel GPU does: a candidate that raises Intel's device-lost text on the
    CPU exercises the stage's fault path."""

    fault_patterns = XpuDevice.fault_patterns


def main(problem_path: str, cache_dir: str, *files: str) -> None:
    problem = load_problem(Path(problem_path))
    results = {}
    for name in files:
        candidate = Candidate.from_path(Path(name), label=Path(name).stem)
        with tempfile.TemporaryDirectory() as workdir:
            context = StageContext(problem=problem, workdir=Path(workdir), options=XpuOptions(),
                                   cache_dir=Path(cache_dir), device=HarnessDevice(CpuDeviceWithIntelFaults(XPU)))
            result = compile_candidate(XPU, candidate, context)
        results[Path(name).name] = {"ok": result.ok, "failure": result.failure and result.failure.value,
                                    "log": result.log}
    print(json.dumps(results))


if __name__ == "__main__":
    main(*sys.argv[1:])
