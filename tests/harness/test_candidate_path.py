"""A candidate's path through the KForge process reads top to bottom: from ``Harness.evaluate`` it is handed on
through a few files (the owner of one candidate, its stages, the baselines' window beside its timing), and no call
goes back into a file up the stack (a callback into ``Harness``, into the owner). The processes a harness keeps (its
pool, worker processes, referee, builds ahead, baseline worker) are called as one step each: how a message reaches
a worker and comes back is theirs."""

from __future__ import annotations

import sys
from pathlib import Path

import kforge_core.harness.host as host

from .helpers import candidate

HOST = Path(host.__file__).parent
PROCESSES = {"pool.py", "process.py", "referee.py", "prebuild.py", "baseline_worker.py"}


def host_call_stacks(run) -> set[tuple[tuple[str, str], ...]]:  # noqa: ANN001
    """Each distinct stack of host files (and their functions) that ``run()`` called through, from the outermost
    host frame, consecutive frames of one file as one, cut below the first frame of a process-keeping file."""
    stacks: set[tuple[tuple[str, str], ...]] = set()

    def profile(frame, event, arg):  # noqa: ANN001, ANN202
        if event != "call" or not frame.f_code.co_filename.startswith(str(HOST)):
            return
        chain: list[tuple[str, str]] = []
        while frame is not None:
            path = frame.f_code.co_filename
            if path.startswith(str(HOST)):
                name = Path(path).name
                if not chain or chain[-1][0] != name:
                    chain.append((name, frame.f_code.co_name))
            frame = frame.f_back
        chain.reverse()
        first = next((i for i, (name, _) in enumerate(chain) if name in PROCESSES), len(chain) - 1)
        stacks.add(tuple(chain[:first + 1]))

    sys.setprofile(profile)
    try:
        run()
    finally:
        sys.setprofile(None)
    return stacks


def test_a_candidates_path_is_handed_on_through_five_files_and_never_back(relu_harness):
    relu_harness.evaluate(candidate("relu_scale_numpy"))  # workers and baselines warm: the path, not the starts
    stacks = host_call_stacks(lambda: relu_harness.evaluate(candidate("relu_scale_numpy", "traced")))
    back = sorted(" -> ".join(f"{name}:{function}" for name, function in stack) for stack in stacks
                  if len({name for name, _ in stack}) < len(stack))
    assert back == []
    handing_on = {name for stack in stacks for name, _ in stack[:-1] if name not in PROCESSES}
    assert handing_on == {"harness.py", "candidate_evaluation.py", "evaluation.py", "baselines_window.py", "quiet.py"}
