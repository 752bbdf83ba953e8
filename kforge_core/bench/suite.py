"""A suite: a directory of problem files, as KernelBench lays them out (``level1/19_ReLU.py``, ...), and the ones
``--filter`` picks."""

from __future__ import annotations

import fnmatch
import hashlib
import re
from dataclasses import dataclass
from pathlib import Path

from ..errors import KForgeError


@dataclass(frozen=True)
class SuiteProblem:
    """One problem file of a suite.

    :param key: its path in the suite without ``.py`` (``level1/19_ReLU``): how results, solutions and filters
        name it.
    :param path: the file, absolute.
    """

    key: str
    path: Path

    @property
    def name(self) -> str:
        return self.path.stem

    @property
    def digest(self) -> str:
        """The hash of the file's text, as ``Problem.digest`` computes it (without running the problem)."""
        return hashlib.sha256(self.path.read_text().encode()).hexdigest()[:16]

    def matches(self, pattern: str) -> bool:
        """``pattern`` (a glob) matches the key, the relative path or the file's name."""
        return any(fnmatch.fnmatchcase(text, pattern) for text in (self.key, f"{self.key}.py", self.name,
                                                                    self.path.name))


def discover(suite: Path, filters: tuple[str, ...] = ()) -> list[SuiteProblem]:
    """Every problem file under ``suite`` (``*.py``, recursively; files and folders starting with ``_`` or
    ``.`` are not problems), those matching any of ``filters`` when given, in natural order (``2_`` before
    ``10_``)."""
    suite = suite.resolve()
    if not suite.is_dir():
        raise KForgeError(f"suite not found: {suite} is not a directory",
                          hint="give a directory of problem files, e.g. a KernelBench checkout's KernelBench/")
    problems = [
        SuiteProblem(path.relative_to(suite).with_suffix("").as_posix(), path)
        for path in suite.rglob("*.py")
        if not any(part.startswith(("_", ".")) for part in path.relative_to(suite).parts)
    ]
    if filters:
        problems = [p for p in problems if any(p.matches(pattern) for pattern in filters)]
    if not problems:
        what = f"matching {', '.join(filters)} " if filters else ""
        raise KForgeError(f"no problem files {what}in {suite}")
    return sorted(problems, key=lambda p: natural_key(p.key))


def natural_key(text: str) -> tuple[tuple[int, object], ...]:
    """Sort key that orders numbers by value: ``level1/2_x`` before ``level1/10_y``."""
    return tuple((0, int(part)) if part.isdigit() else (1, part) for part in re.split(r"(\d+)", text) if part)
