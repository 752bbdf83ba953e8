"""Helpers for the cpu backend's tests: candidates from source text, and stage hooks run in a real child process
(``cpu_stage_worker.py``) the way a harness worker runs them."""

from __future__ import annotations

import pickle
import subprocess
import sys
import textwrap
from pathlib import Path

import kforge_cpu
from kforge_core.records import Candidate, Problem, StageContext
from kforge_cpu import CpuOptions

WORKER = Path(__file__).with_name("cpu_stage_worker.py")
EXAMPLE_DIR = Path(kforge_cpu.__file__).resolve().parent / "example"
EXAMPLE_PROBLEM = EXAMPLE_DIR / "add_rmsnorm.py"
EXAMPLE_SOLUTION = EXAMPLE_DIR / "add_rmsnorm_numba.py"

Job = tuple[Candidate, Problem, tuple[str, ...], CpuOptions]


def candidate(source: str, label: str = "candidate") -> Candidate:
    return Candidate.from_source(textwrap.dedent(source), label=label)


def run_stages(jobs: list[Job], root: Path, cache_dir: Path, timeout: float = 300) -> list[dict]:
    """Run each job's stages for its candidate in one child process (a warm worker), each in its own directory."""
    payload = []
    for i, (cand, problem, stages, options) in enumerate(jobs):
        workdir = root / f"candidate-{i}"
        workdir.mkdir(parents=True)
        cand.write_to(workdir)
        context = StageContext(problem=problem, workdir=workdir, options=options, cache_dir=cache_dir)
        payload.append({"candidate": cand, "context": context, "stages": list(stages)})
    jobs_file, results_file = root / "jobs.pickle", root / "results.pickle"
    jobs_file.write_bytes(pickle.dumps(payload))
    done = subprocess.run([sys.executable, str(WORKER), str(jobs_file), str(results_file)],
                          capture_output=True, text=True, timeout=timeout)
    assert done.returncode == 0, done.stderr[-3000:]
    return pickle.loads(results_file.read_bytes())
