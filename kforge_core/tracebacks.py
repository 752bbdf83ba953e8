"""Finding the candidate's own lines in a traceback: the generation agent needs the line of its code that failed,
not the harness's or a library's frames. Every stage and backend uses these."""

from __future__ import annotations

import re
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


ANSI_ESCAPE = re.compile(r"\x1b\[[0-9;?]*[A-Za-z]")
MESSAGE_HEAD_LINES = 60  # of a long exception message, these first lines and the last few are kept
MESSAGE_TAIL_LINES = 10


def exception_line(exc: BaseException) -> str:
    """``TypeError: message`` on one line (the last line of Python's own rendering)."""
    lines = exception_text(exc).splitlines()
    return lines[-1] if lines else type(exc).__name__


def exception_text(exc: BaseException) -> str:
    """The exception as Python renders it without the traceback: its type and its whole message, every line of a
    multi-line one (a Numba typing error, notes), without terminal colour codes; a very long one keeps its head
    and tail."""
    text = ANSI_ESCAPE.sub("", "".join(traceback.format_exception_only(type(exc), exc))).strip()
    lines = text.splitlines()
    if len(lines) <= MESSAGE_HEAD_LINES + MESSAGE_TAIL_LINES:
        return text or type(exc).__name__
    omitted = len(lines) - MESSAGE_HEAD_LINES - MESSAGE_TAIL_LINES
    return "\n".join([*lines[:MESSAGE_HEAD_LINES], f"[{omitted} lines of the message omitted]",
                      *lines[-MESSAGE_TAIL_LINES:]])


def _resolved(path: Path) -> Path | None:
    try:
        return path.resolve() if path.is_absolute() or path.exists() else None
    except (OSError, ValueError):
        return None
