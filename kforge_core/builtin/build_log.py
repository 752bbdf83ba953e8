"""Trimming a toolchain's output to what a model needs to fix the code: the first errors with their context."""

from __future__ import annotations

import re

_ERROR = re.compile(r"(error|Error|ERROR)\b|undefined reference|fatal")
MAX_LINES = 60


def trim_build_log(text: str, max_lines: int = MAX_LINES) -> str:
    """The lines around the first errors (two before, three after each), at most ``max_lines``; the text
    itself when it is short or names no error."""
    lines = text.splitlines()
    if len(lines) <= max_lines:
        return text.strip()
    keep: set[int] = set()
    for i, line in enumerate(lines):
        if _ERROR.search(line):
            keep.update(range(max(i - 2, 0), min(i + 4, len(lines))))
        if len(keep) >= max_lines:
            break
    if not keep:
        return "\n".join([*lines[:max_lines // 2], "[...]", *lines[-max_lines // 2:]])
    out, last = [], -1
    for i in sorted(keep)[:max_lines]:
        if last >= 0 and i != last + 1:
            out.append("[...]")
        out.append(lines[i])
        last = i
    return "\n".join(out)
