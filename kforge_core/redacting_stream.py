"""The terminal's side of redaction: KForge's standard output and error pass through :func:`redact` line by line,
so a secret that a candidate printed or raised never reaches the terminal (or a log that captures it).

The same wrapper notices when the reader of the output goes away (``kforge runs | head``: the pipe is closed) and
says so with :class:`OutputClosed`, once; what is written after that is dropped."""

from __future__ import annotations

import os
from typing import Any, TextIO

from .secrets import redact


class OutputClosed(BaseException):
    """The reader of KForge's output went away (a closed pipe). This is neither a failure of the work nor the
    user's interrupt, so it is no ``Exception``: no handler records it as a run's or a bench's failure, and the CLI
    ends the command quietly, leaving the store as the work last committed it."""


class RedactingStream:
    """Wraps a text stream: whole lines are written redacted; a partial line waits for its end (or a flush)."""

    def __init__(self, stream: TextIO) -> None:
        self.stream = stream
        self._pending = ""
        self.reader_gone = False

    def write(self, text: str) -> int:
        if self.reader_gone:
            return len(text)
        self._pending += text
        lines, newline, self._pending = self._pending.rpartition("\n")
        if newline:
            self._guarded(self.stream.write, redact(lines + newline))
        return len(text)

    def flush(self) -> None:
        if self.reader_gone:
            return
        if self._pending:
            self._guarded(self.stream.write, redact(self._pending))
            self._pending = ""
        self._guarded(self.stream.flush)

    def _guarded(self, call: Any, *args: Any) -> None:
        try:
            call(*args)
        except BrokenPipeError:
            self.reader_gone = True
            self._pending = ""
            self._discard_the_rest()
            raise OutputClosed(f"the reader of {getattr(self.stream, 'name', 'the output')} went away") from None

    def _discard_the_rest(self) -> None:
        """What the wrapped stream still buffers goes nowhere: at exit, its flush would fail again, loudly."""
        try:
            devnull = os.open(os.devnull, os.O_WRONLY)
            os.dup2(devnull, self.stream.fileno())
            os.close(devnull)
        except (OSError, ValueError, AttributeError):  # a stream without a descriptor keeps what it buffers
            pass

    def __getattr__(self, name: str) -> Any:  # isatty, encoding, fileno: the wrapped stream's
        return getattr(self.stream, name)
