"""Importing a candidate's module inside a worker. Never called in the KForge process.

Every stage of one candidate (compile, verify, profile) shares the module imported here, so a JIT compiled during
the compile stage is not compiled again when the candidate is verified. :func:`import_for_compile` is the compile
stage's preamble, the same for every backend.
"""

from __future__ import annotations

import importlib.util
import sys
from pathlib import Path
from types import ModuleType
from typing import Callable

from .records import Candidate, Failure

_imported: dict[tuple[str, str], ModuleType] = {}


def syntax_error(candidate: Candidate) -> str | None:
    """The first syntax error in the candidate's Python files, as ``file:line: SyntaxError: ...`` with the line;
    None when every file compiles. Runs nothing."""
    for f in candidate.files:
        if not f.name.endswith(".py"):
            continue
        try:
            compile(f.text, f.name, "exec")
        except SyntaxError as exc:
            return f"{f.name}:{exc.lineno}: SyntaxError: {exc.msg}\n    {(exc.text or '').rstrip()}"
    return None


class NotBuilt(Exception):
    """The compile stage's answer for a candidate that does not build: the failure class and the log."""

    def __init__(self, failure: Failure, log: str) -> None:
        super().__init__(log)
        self.failure = failure
        self.log = log


def import_for_compile(candidate: Candidate, workdir: Path,
                       describe_error: Callable[[Exception], NotBuilt]) -> ModuleType:
    """The compile stage's first steps: every Python file's syntax (``Failure.SYNTAX``), the entry module imported
    (what it raises is turned into a :class:`NotBuilt` by ``describe_error``: a build that failed while the module
    was imported, or an import error), and its ``ModelNew`` found (``Failure.NO_MODEL_NEW``).

    :raises NotBuilt: at the first step that fails.
    """
    error = syntax_error(candidate)
    if error is not None:
        raise NotBuilt(Failure.SYNTAX, error)
    try:
        module = import_candidate(candidate, workdir)
    except Exception as exc:
        raise describe_error(exc) from None
    if not isinstance(getattr(module, "ModelNew", None), type):
        raise NotBuilt(Failure.NO_MODEL_NEW, f"{candidate.entry} defines no class ModelNew")
    return module


def candidate_module_name(candidate: Candidate) -> str:
    return f"kforge_candidate_{candidate.digest}"


def import_candidate(candidate: Candidate, workdir: Path) -> ModuleType:
    """Import the candidate's entry module from ``workdir`` (once per process) and return it.

    The candidate's directory goes on ``sys.path`` so that a multi-file candidate can import its siblings.
    Exceptions from the module's own code propagate: the caller classifies them.
    """
    key = (str(workdir.resolve()), candidate.digest)
    if key in _imported:
        return _imported[key]
    entry = workdir / candidate.entry
    if not entry.exists():
        candidate.write_to(workdir)
    name = candidate_module_name(candidate)
    spec = importlib.util.spec_from_file_location(name, entry)
    if spec is None or spec.loader is None:
        raise ImportError(f"cannot import {entry}")
    module = importlib.util.module_from_spec(spec)
    if str(workdir) not in sys.path:
        sys.path.insert(0, str(workdir))
    sys.modules[name] = module
    try:
        spec.loader.exec_module(module)
    except BaseException:
        sys.modules.pop(name, None)
        raise
    _imported[key] = module
    return module
