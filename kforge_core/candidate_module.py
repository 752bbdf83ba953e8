"""Importing a candidate's module inside a worker. Never called in the KForge process.

Every stage of one candidate (compile, verify, profile) shares the module imported here, so a JIT compiled during
the compile stage is not compiled again when the candidate is verified. :func:`import_for_compile` is the compile
stage's preamble, the same for every backend.
"""

from __future__ import annotations

import importlib.util
import inspect
import sys
from dataclasses import dataclass
from pathlib import Path
from types import ModuleType
from typing import Any, Callable

from .records import Candidate, Failure

DEFAULT_CLASS = "ModelNew"
FALLBACK_CLASS = "Model"  # what solutions that kept the reference's class name call it

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


def import_for_compile(candidate: Candidate, workdir: Path, describe_error: Callable[[Exception], NotBuilt],
                       class_name: str = DEFAULT_CLASS) -> ModuleType:
    """The compile stage's first steps: every Python file's syntax (``Failure.SYNTAX``), the entry module imported
    (what it raises is turned into a :class:`NotBuilt` by ``describe_error``: a build that failed while the module
    was imported, or an import error), and its class found (:func:`candidate_class`; ``Failure.NO_MODEL_NEW``).

    :raises NotBuilt: at the first step that fails.
    """
    error = syntax_error(candidate)
    if error is not None:
        raise NotBuilt(Failure.SYNTAX, error)
    try:
        module = import_candidate(candidate, workdir)
    except Exception as exc:
        raise describe_error(exc) from None
    try:
        candidate_class(module, class_name)
    except NoCandidateClass as missing:
        raise NotBuilt(Failure.NO_MODEL_NEW, f"{candidate.entry} {missing}") from None
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


class NoCandidateClass(Exception):
    """The candidate's module defines no class of the name asked for (nor the fallback)."""


@dataclass(frozen=True)
class CandidateClass:
    """The class a candidate is evaluated as, and a note when it is not the one asked for."""

    cls: type
    note: str = ""


def candidate_class_name(context: Any) -> str:
    """The class name a stage looks for: ``harness.candidate_class`` from the stage's settings (``ModelNew``)."""
    settings = getattr(context, "settings", None)
    settings = getattr(settings, "harness", settings)
    return getattr(settings, "candidate_class", DEFAULT_CLASS) or DEFAULT_CLASS


def candidate_class(module: ModuleType, name: str = DEFAULT_CLASS) -> CandidateClass:
    """The class ``name`` of the candidate's module; for ``ModelNew``, a module without one that defines ``Model``
    gets its ``Model`` (with a note saying so). A function of that name that builds the model (KernelBench's eval
    calls ``ModelNew(*get_init_inputs())`` whatever it is; some published solutions return a scripted module) stands
    for the class, with a note. Raises :class:`NoCandidateClass`."""
    for attribute in (name, FALLBACK_CLASS) if name == DEFAULT_CLASS else (name,):
        found = getattr(module, attribute, None)
        is_class = isinstance(found, type)
        if not (is_class or inspect.isfunction(found)):
            continue
        notes = [] if attribute == name else [f"the candidate defines no {DEFAULT_CLASS}: its "
                                              f"{'class ' if is_class else ''}{FALLBACK_CLASS} was evaluated as the "
                                              "candidate"]
        if not is_class:
            notes.append(f"{attribute} is a function: the model it returns was evaluated as the candidate")
        return CandidateClass(found, "; ".join(notes))
    also = f" (nor a class {FALLBACK_CLASS})" if name == DEFAULT_CLASS else ""
    raise NoCandidateClass(f"defines no class {name}{also}")
