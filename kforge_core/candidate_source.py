"""Reading a candidate's Python sources without running them: for the harness's static checks and for plugins
that build ahead from the sources alone."""

from __future__ import annotations

import ast
from typing import Iterator

from .records import Candidate, SourceFile


def parsed_python_files(candidate: Candidate) -> Iterator[tuple[SourceFile, ast.Module]]:
    """Each of the candidate's ``.py`` files with its syntax tree; a file with a syntax error is skipped (the
    compile stage reports it)."""
    for file in candidate.files:
        if not file.name.endswith(".py"):
            continue
        try:
            yield file, ast.parse(file.text)
        except SyntaxError:
            continue
