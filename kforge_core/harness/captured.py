"""Reading back what a candidate printed, cut to a size a person (or a model) can read."""

from __future__ import annotations

import os

STDOUT_FILE = "stdout.txt"  # the names a kept scratch directory gives a candidate's captured output
STDERR_FILE = "stderr.txt"


def read_truncated(fd: int, limit_bytes: int) -> str:
    """The text of the open file ``fd`` (read where it lies, its offset untouched); when longer than
    ``limit_bytes``, its head and tail with a line saying how much was cut.

    The head usually holds the first error and the tail the last words before a crash, so both are kept.
    """
    try:
        size = os.fstat(fd).st_size
        if size <= limit_bytes:
            return _read_at(fd, 0, size).decode("utf-8", errors="replace")
        half = max(limit_bytes // 2, 1)
        head, tail = _read_at(fd, 0, half), _read_at(fd, size - half, half)
    except OSError:
        return ""
    cut = size - 2 * half
    marker = f"\n[... {cut:,} bytes cut: output over the {limit_bytes // 1024} KiB limit ...]\n"
    return head.decode("utf-8", errors="replace") + marker + tail.decode("utf-8", errors="replace")


def _read_at(fd: int, offset: int, count: int) -> bytes:
    chunks = []
    while count > 0:
        chunk = os.pread(fd, min(count, 1 << 20), offset)
        if not chunk:
            break
        chunks.append(chunk)
        offset += len(chunk)
        count -= len(chunk)
    return b"".join(chunks)


def tail_lines(text: str, count: int = 12) -> str:
    """The last ``count`` non-empty lines of ``text``."""
    lines = [line for line in text.splitlines() if line.strip()]
    return "\n".join(lines[-count:])
