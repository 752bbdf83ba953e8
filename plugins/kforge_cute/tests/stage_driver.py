"""Runs the cute compile stage on candidates in this process, as a worker would, and prints each result as a JSON
line: ``python stage_driver.py CACHE_DIR SCRATCH candidate.py [candidate.py ...]`` (each in a workdir of its own)."""

import json
import sys
from pathlib import Path

from kforge_core.problem import load_problem
from kforge_core.records import Candidate, StageContext
from kforge_cute import CUTE
from kforge_cute.compile_stage import compile_candidate
from kforge_cute.options import CuteOptions

HERE = Path(__file__).resolve().parent


def main(cache_dir: str, scratch: str, *files: str) -> None:
    problem = load_problem(HERE / "candidates" / "tiny_problem.py")
    for i, file in enumerate(files):
        candidate = Candidate.from_source(Path(file).read_text(), label=f"c{i}")
        workdir = Path(scratch) / f"w{i}"
        workdir.mkdir(parents=True)
        context = StageContext(problem=problem, workdir=workdir, options=CuteOptions(warmup_forward=False),
                               cache_dir=Path(cache_dir))
        result = compile_candidate(CUTE, candidate, context)
        print(json.dumps({"ok": result.ok, "cached": result.cached, "log": result.log,
                          "failure": result.failure.value if result.failure else None}), flush=True)


if __name__ == "__main__":
    main(*sys.argv[1:])
