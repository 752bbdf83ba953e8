"""Finding the candidate's own lines in a traceback: the generation agent needs the line of its code that failed,
not the harness's or a library's frames. Every stage and backend uses these."""

from __future__ import annotations

import traceback
from dataclasses import dataclass
from pathlib import Path


@dataclass(frozen=True)
class CandidateLine:
    """One frame of a traceback that is in the candidate's files.

    :param file: the file, relative to the candidate's directory.
    :param line: the line number.
    :param function: the function the line is in.
    :param text: the line's source, stripped.
    """

    file: str
    line: int
    function: str
    text: str

    def describe(self) -> str:
        """``file:line: text`` (``file:line`` when the source is not known)."""
        return f"{self.file}:{self.line}: {self.text}" if self.text else f"{self.file}:{self.line}"


def candidate_lines(exc: BaseException, workdir: Path) -> list[CandidateLine]:
    """The frames of ``exc``'s traceback in files under ``workdir`` (the candidate's directory), outermost first."""
    root = _resolved(workdir)
    found = []
    for frame in traceback.extract_tb(exc.__traceback__):
        path = _resolved(Path(frame.filename))
        if root is not None and path is not None and path.is_relative_to(root):
            found.append(CandidateLine(str(path.relative_to(root)), frame.lineno or 0, frame.name,
                                       (frame.line or "").strip()))
    return found


def innermost_candidate_line(exc: BaseException, workdir: Path) -> CandidateLine | None:
    """The candidate's line closest to where ``exc`` was raised, or None when its code is not in the traceback."""
    lines = candidate_lines(exc, workdir)
    return lines[-1] if lines else None


def exception_line(exc: BaseException) -> str:
    """``TypeError: message`` on one line (the last line of Python's own rendering)."""
    lines = "".join(traceback.format_exception_only(type(exc), exc)).strip().splitlines()
    return lines[-1] if lines else type(exc).__name__


def _resolved(path: Path) -> Path | None:
    try:
        return path.resolve() if path.is_absolute() or path.exists() else None
    except (OSError, ValueError):
        return None
