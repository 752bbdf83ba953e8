"""The scratch root's layout, and who writes where in it.

::

    ROOT/problems/DIGEST/NAME         a problem's source as workers read it (in the sandbox, when the problem file
                                      lies under a hidden directory): written by the KForge process alone, read-only
                                      to every worker
    ROOT/workers/worker-N/            worker N's home: the only directory of the scratch root it writes
    ROOT/workers/worker-N/candidates/NNNN-LABEL-DIGEST/
                                      a candidate's scratch directory, in the home of the worker that serves it
    ROOT/workers-ahead/baselines-N/   the next problem's baseline worker's home
    ROOT/prebuilds/NNNN-DIGEST/       a build-ahead child's directory: the only one it writes

In the sandbox the scratch root is hidden from workers as a whole and brought back piece by piece: each worker's
home writable (``namespaces.sandboxed_command``), the problem copies read-only, and, for the referee alone (which reads and
removes the outputs candidates' workers ship, and never runs candidate code), ``ROOT/workers`` writable. So a
candidate can write nothing the KForge process or another worker reads by name: not the problem copy, not another
candidate's directory, not a future worker's home. KForge's own state (the baseline cache and its key,
``Settings.state_dir``) is hidden as well. Without the sandbox a worker runs as the same user and can write
wherever that user can: there, what the KForge process still reads or writes in a worker's directory goes through
``safe_files`` (docs/trust.md).
"""

from __future__ import annotations

import dataclasses
import os
import tempfile
from dataclasses import dataclass
from pathlib import Path
from typing import Iterable

from ...records import Problem
from ..sandbox_plan import SandboxPlan


@dataclass(frozen=True)
class ScratchLayout:
    """The directories of the scratch root ``root`` (see the module's docstring)."""

    root: Path

    @property
    def problems(self) -> Path:
        return self.root / "problems"

    @property
    def workers(self) -> Path:
        return self.root / "workers"

    @property
    def workers_ahead(self) -> Path:
        return self.root / "workers-ahead"

    @property
    def prebuilds(self) -> Path:
        return self.root / "prebuilds"

    def make(self) -> ScratchLayout:
        """Make the directories (before any worker starts: the sandbox binds only what exists)."""
        for directory in (self.problems, self.workers, self.workers_ahead, self.prebuilds):
            directory.mkdir(parents=True, exist_ok=True)
        return self

    def problem_copy(self, problem: Problem) -> Path:
        """``problem``'s validated source as a file in ``ROOT/problems``, written whole or not at all (a new file
        renamed over the old name: the rename replaces a name, it never writes through one)."""
        folder = self.problems / problem.digest
        folder.mkdir(exist_ok=True)
        copy = folder / problem.path.name
        handle, temporary = tempfile.mkstemp(dir=folder, prefix=".problem-", suffix=".py")
        try:
            with os.fdopen(handle, "w") as out:
                out.write(problem.source)
            os.chmod(temporary, 0o644)
            os.replace(temporary, copy)
        except BaseException:
            Path(temporary).unlink(missing_ok=True)
            raise
        return copy


def confined(plan: SandboxPlan, layout: ScratchLayout, private: Iterable[Path] = ()) -> SandboxPlan:
    """``plan`` for the workers of ``layout``: the scratch root no longer writable but hidden, the problem copies
    read-only, ``private`` (KForge's own state) hidden; each worker's home is made writable when it starts."""
    root = str(layout.root.resolve())
    own = {root, *(str(Path(p).resolve()) for p in private)}
    hide = {*plan.hide, *own}
    writable = tuple(p for p in plan.writable if p != root)
    readable = tuple(sorted({*plan.readable, str(layout.problems.resolve())}))
    return dataclasses.replace(plan, hide=tuple(sorted(hide)), writable=writable, readable=readable,
                               sealed=tuple(sorted({*plan.sealed, *own})))


def for_referee(plan: SandboxPlan, layout: ScratchLayout) -> SandboxPlan:
    """``plan`` with the workers' homes writable: the referee reads and removes what candidates' workers ship."""
    return _also_writable(plan, layout.workers)


def for_baselines(plan: SandboxPlan, caches: Path) -> SandboxPlan:
    """``plan`` with ``caches`` writable: the baseline workers' own build caches, in KForge's hidden state (they
    never run candidate code; no candidate's worker sees the directory)."""
    return _also_writable(plan, caches)


def _also_writable(plan: SandboxPlan, directory: Path) -> SandboxPlan:
    return dataclasses.replace(plan, writable=(*plan.writable, str(directory.resolve())))
