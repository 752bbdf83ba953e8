"""Existing solutions for a suite's problems (``kforge bench --solutions``): a directory with one file per problem,
named as the problem's file, flat or mirroring the suite's folders; or a JSONL file of ``{"problem": ...,
"code": ...}`` lines, as published solution sets come."""

from __future__ import annotations

import json
import re
from pathlib import Path
from typing import Protocol

from ..errors import KForgeError
from ..records import Candidate, SourceFile
from .suite import SuiteProblem
from ..plural import counted


class Solutions(Protocol):
    def candidate_for(self, problem: SuiteProblem) -> Candidate | None:
        """The solution of ``problem``, labelled with its key; None when there is none."""
        ...


def open_solutions(path: Path, problems: list[SuiteProblem], *, entry: str = "model_new.py") -> Solutions:
    """Solutions from a directory or a ``.jsonl`` file."""
    if path.is_dir():
        return SolutionDirectory(path.resolve(), problems, entry)
    if path.is_file() and path.suffix == ".jsonl":
        return SolutionLines.read(path, problems)
    raise KForgeError(f"solutions not found: {path} is neither a directory nor a .jsonl file")


def require_a_match(path: Path, problems: list[SuiteProblem], *, entry: str = "model_new.py") -> None:
    """Refuse solutions that match none of the problems: a bench of nothing but ``no_solution`` is a mistake (the
    wrong directory, or files named otherwise), so say what was found and how problems are matched."""
    solutions = open_solutions(path, problems, entry=entry)
    if not problems or any(solutions.candidate_for(problem) is not None for problem in problems):
        return
    example = problems[0]
    if isinstance(solutions, SolutionLines):
        found = solutions.unmatched
        how = (f"each line's \"problem\" names one by its key ({example.key}), its path ({example.key}.py), its "
               f"file name ({example.path.name}) or its level and number")
    else:
        relative = [p.relative_to(path) for p in path.rglob("*") if p.is_file()]
        found = sorted(str(r) for r in relative
                       if not any(part[:1] == "." or part == "__pycache__" for part in r.parts))
        how = (f"a problem's solution is {example.key}.py (mirroring the suite's folders) or {example.path.name} "
               f"(flat), or a directory of that name holding {entry}")
    shown = ", ".join(found[:8]) + (f" and {len(found) - 8} more" if len(found) > 8 else "") if found else "nothing"
    raise KForgeError(f"no solution in {path} matches any of the {counted(len(problems), 'problem')} (found: {shown})",
                      hint=how)


class SolutionDirectory:
    """``DIR/<key>.py`` (mirroring the suite's folders) or ``DIR/<name>.py`` (flat); a directory instead of the
    file holds a candidate of several files, ``entry`` defining ``ModelNew``."""

    def __init__(self, root: Path, problems: list[SuiteProblem], entry: str) -> None:
        self.root = root
        self.entry = entry
        names = [p.name for p in problems]
        self._shared_names = {name for name in names if names.count(name) > 1}

    def candidate_for(self, problem: SuiteProblem) -> Candidate | None:
        places = [self.root / problem.key]
        if problem.name not in self._shared_names:  # a flat name is used only where it names one problem
            places.append(self.root / problem.name)
        for place in places:
            file = place.with_name(place.name + ".py")
            if file.is_file():
                return Candidate.from_path(file, label=problem.key)
            if place.is_dir():
                return _directory_candidate(place, self.entry, problem.key)
        return None


def _directory_candidate(path: Path, entry: str, label: str) -> Candidate:
    files = tuple(SourceFile(str(p.relative_to(path)), p.read_text()) for p in sorted(path.rglob("*"))
                  if p.is_file() and "__pycache__" not in p.parts and not p.name.startswith("."))
    if entry not in {f.name for f in files}:
        raise KForgeError(f"{path} has no {entry}", hint="name the file that defines ModelNew with --entry")
    return Candidate(files=files, entry=entry, label=label)


class SolutionLines:
    """A JSONL solution set. ``problem`` names a problem by its key (``level1/19_ReLU``), its relative path, its
    file name (with or without ``.py``, where that names one problem), or its level and number (``level1/19``).
    The first line for a problem is its solution; later ones are counted in ``ignored``."""

    def __init__(self, by_key: dict[str, Candidate], ignored: int, unmatched: list[str]) -> None:
        self._by_key = by_key
        self.ignored = ignored
        self.unmatched = unmatched

    @classmethod
    def read(cls, path: Path, problems: list[SuiteProblem]) -> SolutionLines:
        names = _Names(problems)
        by_key: dict[str, Candidate] = {}
        ignored, unmatched = 0, []
        for number, line in enumerate(path.read_text().splitlines(), start=1):
            if not line.strip():
                continue
            try:
                entry = json.loads(line)
                reference, code = str(entry["problem"]), entry["code"]
                if not isinstance(code, str):
                    raise TypeError("code is not a string")
            except (ValueError, KeyError, TypeError) as exc:
                raise KForgeError(f"{path}:{number}: expected a JSON object with \"problem\" and \"code\" ({exc})") \
                    from None
            key = names.key_of(reference)
            if key is None:
                unmatched.append(reference)
            elif key in by_key:
                ignored += 1
            else:
                by_key[key] = Candidate.from_source(code, label=key)
        return cls(by_key, ignored, unmatched)

    def candidate_for(self, problem: SuiteProblem) -> Candidate | None:
        return self._by_key.get(problem.key)


class _Names:
    """The ways a solution set names a problem, each mapped to the problem's key where it names one only."""

    def __init__(self, problems: list[SuiteProblem]) -> None:
        self._names: dict[str, set[str]] = {}
        for p in problems:
            folder = p.key.rsplit("/", 1)[0] if "/" in p.key else ""
            number = re.match(r"(\d+)_", p.name)
            spellings = {p.key, f"{p.key}.py", p.name, p.path.name}
            if number:
                spellings.add(f"{folder}/{number.group(1)}" if folder else number.group(1))
            for spelling in spellings:
                self._names.setdefault(spelling, set()).add(p.key)

    def key_of(self, reference: str) -> str | None:
        keys = self._names.get(reference.strip().lstrip("./"), set())
        return next(iter(keys)) if len(keys) == 1 else None
