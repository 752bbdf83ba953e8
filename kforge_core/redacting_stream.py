"""The terminal's side of redaction: KForge's standard output and error pass through :func:`redact` line by line,
so a secret that a candidate printed or raised never reaches the terminal (or a log that captures it)."""

from __future__ import annotations

from typing import Any, TextIO

from .secrets import redact


class RedactingStream:
    """Wraps a text stream: whole lines are written redacted; a partial line waits for its end (or a flush)."""

    def __init__(self, stream: TextIO) -> None:
        self.stream = stream
        self._pending = ""

    def write(self, text: str) -> int:
        self._pending += text
        lines, newline, self._pending = self._pending.rpartition("\n")
        if newline:
            self.stream.write(redact(lines + newline))
        return len(text)

    def flush(self) -> None:
        if self._pending:
            self.stream.write(redact(self._pending))
            self._pending = ""
        self.stream.flush()

    def __getattr__(self, name: str) -> Any:  # isatty, encoding, fileno: the wrapped stream's
        return getattr(self.stream, name)
