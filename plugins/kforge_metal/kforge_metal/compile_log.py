"""The Metal compiler's diagnostics, turned into a log a model can act on.

``torch.mps.compile_shader`` raises ``SyntaxError`` whose text is the compiler's output, clang's format with the
shader called ``program_source``::

    program_source:12:5: error: use of undeclared identifier 'acc'
        acc += v;
        ^
    program_source:3:10: warning: unused variable 'n' [-Wunused-variable]

Each diagnostic keeps its source line and caret. The log shows the errors (warnings only when there is no
error), each placed at the line of the candidate's Python file where that shader line is, when the shader's
string can be found there (see :mod:`kforge_metal.shader_sources`).
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from typing import Callable

MAX_DIAGNOSTICS = 5
MAX_EXCERPT_LINES = 4
MAX_CHARS = 4000

_HEADER = re.compile(r"^program_source:(?P<line>\d+):(?P<column>\d+):\s*(?P<severity>fatal error|error|warning|note):"
                     r"\s*(?P<message>.*)$")
_SUMMARY = re.compile(r"^\d+ (?:errors?|warnings?)(?: and \d+ warnings?)? generated\.?$")


@dataclass(frozen=True)
class Diagnostic:
    """One message of the compiler: where in the shader, how bad, what, and the excerpt it printed."""

    line: int
    column: int
    severity: str  # "error", "fatal error", "warning" or "note"
    message: str
    excerpt: tuple[str, ...] = ()

    @property
    def is_error(self) -> bool:
        return self.severity in ("error", "fatal error")


def parse_diagnostics(text: str) -> list[Diagnostic]:
    """Every ``program_source:LINE:COL: severity: message`` in ``text``, with the lines printed under it."""
    diagnostics: list[Diagnostic] = []
    excerpt: list[str] = []
    current: re.Match[str] | None = None

    def close() -> None:
        if current is not None:
            diagnostics.append(Diagnostic(int(current["line"]), int(current["column"]), current["severity"],
                                          current["message"].strip(), tuple(excerpt[:MAX_EXCERPT_LINES])))

    for raw in text.replace("\r\n", "\n").splitlines():
        line = raw.rstrip()
        header = _HEADER.match(line.strip())
        if header:
            close()
            current, excerpt = header, []
        elif current is not None and line.strip() and not _SUMMARY.match(line.strip()):
            excerpt.append(line)
    close()
    return diagnostics


# shader line -> "model_new.py:23" (or "shader line 12" when the string was not found in a file)
Locate = Callable[[int], str]


def render_compile_log(text: str, locate: Locate, *, what: str = "the Metal compiler") -> str:
    """The errors of ``text`` (or its warnings, when it has no error), each at its place in the candidate."""
    diagnostics = parse_diagnostics(text)
    shown = [d for d in diagnostics if d.is_error] or [d for d in diagnostics if d.severity == "warning"]
    if not shown:  # not the format we know: keep what it said
        return _clip(f"{what} failed:\n" + text.strip())
    parts = []
    for diagnostic in shown[:MAX_DIAGNOSTICS]:
        place = f"{locate(diagnostic.line)}:{diagnostic.column}"
        block = [f"{place}: {diagnostic.severity}: {diagnostic.message}", *diagnostic.excerpt]
        parts.append("\n".join(block))
    more = len(shown) - MAX_DIAGNOSTICS
    log = f"{what} reported:\n" + "\n\n".join(parts)
    if more > 0:
        log += f"\n\n... and {more} more (fix the first ones first)"
    return _clip(log)


def _clip(text: str) -> str:
    if len(text) <= MAX_CHARS:
        return text
    return text[: MAX_CHARS - 40].rstrip() + "\n... (log truncated)"
