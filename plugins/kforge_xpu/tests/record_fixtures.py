"""Record, on an Intel machine, what the fixtures in fixtures/ were written by hand to look like: unitrace's output
for the example and for the unfused candidate, three profiled forwards each. Run where unitrace is on PATH:

    python plugins/kforge_xpu/tests/record_fixtures.py OUT_DIR

then compare OUT_DIR's files with fixtures/ (and replace them, saying so in fixtures/README.md). It prints each
profile's summary too.
"""

from __future__ import annotations

import shutil
import sys
import tempfile
from pathlib import Path

from kforge_core.problem import load_problem
from kforge_core.records import ProfileResult
from kforge_xpu.device_facts import device_facts_here
from kforge_xpu.profile_child import profile_command
from kforge_xpu.summary import summarize_profile
from kforge_xpu.unitrace_report import parse_unitrace
from kforge_xpu.unitrace_run import find_unitrace, run_unitrace

HERE = Path(__file__).resolve().parent
EXAMPLE = HERE.parent / "kforge_xpu" / "example"
CANDIDATES = {"example": EXAMPLE / "gemm_epilogue_triton.py", "unfused": HERE / "candidates" / "gemm_then_epilogue.py"}
FORWARDS = 3


def main(out: Path) -> int:
    unitrace = find_unitrace()
    if unitrace is None:
        print("unitrace is not on PATH", file=sys.stderr)
        return 1
    out.mkdir(parents=True, exist_ok=True)
    problem = load_problem(EXAMPLE / "gemm_epilogue.py")
    for name, source in CANDIDATES.items():
        with tempfile.TemporaryDirectory() as scratch:
            workdir = Path(scratch)
            shutil.copy(source, workdir / "model_new.py")
            program = profile_command(workdir=workdir, entry="model_new.py", problem=problem.path, calls=FORWARDS)
            run = run_unitrace(unitrace, program, workdir / "unitrace", metric_group="ComputeBasic", timeout_s=600,
                               cwd=workdir)
            for path in run.files:
                shutil.copy(path, out / f"{name}_{path.name}")
        (out / f"{name}_unitrace_all.txt").write_text(run.text)
        report = parse_unitrace(run.text, forwards=FORWARDS)
        profile = ProfileResult(tool="unitrace", kernels=report.kernels + report.commands)
        print(f"--- {name}\n{summarize_profile(problem, profile, device_facts_here()).text}\n")
    return 0


if __name__ == "__main__":
    sys.exit(main(Path(sys.argv[1])))
