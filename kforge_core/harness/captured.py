"""Reading back what a candidate printed, cut to a size a person (or a model) can read."""

from __future__ import annotations

from pathlib import Path

STDOUT_FILE = "stdout.txt"
STDERR_FILE = "stderr.txt"


def read_truncated(path: Path, limit_bytes: int) -> str:
    """The file's text; when longer than ``limit_bytes``, its head and tail with a line saying how much was cut.

    The head usually holds the first error and the tail the last words before a crash, so both are kept.
    """
    try:
        size = path.stat().st_size
    except OSError:
        return ""
    with path.open("rb") as handle:
        if size <= limit_bytes:
            return handle.read().decode("utf-8", errors="replace")
        half = max(limit_bytes // 2, 1)
        head = handle.read(half)
        handle.seek(size - half)
        tail = handle.read(half)
    cut = size - 2 * half
    marker = f"\n[... {cut:,} bytes cut: output over the {limit_bytes // 1024} KiB limit ...]\n"
    return head.decode("utf-8", errors="replace") + marker + tail.decode("utf-8", errors="replace")


def tail_lines(text: str, count: int = 12) -> str:
    """The last ``count`` non-empty lines of ``text``."""
    lines = [line for line in text.splitlines() if line.strip()]
    return "\n".join(lines[-count:])
