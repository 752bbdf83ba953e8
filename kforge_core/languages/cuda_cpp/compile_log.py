"""Trimming toolchain output to what a model needs: the first errors, each with its source line and caret.

nvcc's front end prints ``file(LINE): error: ...`` followed by the source line and a caret; gcc and the
PyTorch extension builder print ``file:LINE:COL: error: ...``; ptxas and nvlink print one-line errors (Triton's
own errors are the language's: ``kforge_core.languages.triton.trim_error``). Whatever the tool, the log that comes back
keeps the first few errors whole, counts the rest, drops the noise (warnings when there are errors, command lines,
absolute build paths) and fits in a few thousand characters.
"""

from __future__ import annotations

import re

MAX_ERRORS = 5
MAX_LINES_PER_ERROR = 8
MAX_CHARS = 4000

# The first line of one diagnostic, for each tool's format.
_DIAGNOSTIC = re.compile(
    r"^(?:\S.*?\(\d+\): (?P<nv>error|warning|remark)"  # nvcc front end: kernel.cu(12): error: ...
    r"|\S.*?:\d+(?::\d+)?: (?:fatal )?(?P<gcc>error|warning|note)"  # gcc/clang: main.cpp:3:5: error: ...
    r"|(?P<tool>ptxas|nvlink|ptxas fatal|nvlink fatal|ld|/usr/bin/ld)\s*(?::|error|fatal)"  # ptxas error : ...
    r"|.*undefined reference to)",
    re.I,
)
_NOISE = re.compile(
    r"^(?:\[\d+/\d+\] |FAILED: |ninja: |Detected CUDA files|Emitting ninja|Building extension|Allowing ninja"
    r"|Using .* as PyTorch extensions root|Loading extension module|\S*(?:c\+\+|g\+\+|nvcc|ld) .* -o \S+)"
)
_SUMMARY = re.compile(r"^\d+ errors? detected in the compilation of")


def _is_error(line: str) -> bool:
    match = _DIAGNOSTIC.match(line)
    if match is None:
        return False
    kind = (match.group("nv") or match.group("gcc") or "error").lower()
    return kind == "error" or "fatal" in line.lower() or "undefined reference" in line or bool(match.group("tool"))


def _shorten_paths(text: str, roots: tuple[str, ...]) -> str:
    for root in sorted((r.rstrip("/") for r in roots if r), key=len, reverse=True):
        text = text.replace(root + "/", "")
    return text


def _diagnostics(lines: list[str]) -> list[list[str]]:
    """Group the log into diagnostics: a first line and the lines that belong to it (source, caret, notes)."""
    groups: list[list[str]] = []
    for line in lines:
        if _DIAGNOSTIC.match(line) or _SUMMARY.match(line):
            groups.append([line])
        elif groups and line.strip() and not _NOISE.match(line):
            groups[-1].append(line)
    return groups


def trim_compile_log(log: str, *, roots: tuple[str, ...] = (), max_errors: int = MAX_ERRORS) -> str:
    """The first ``max_errors`` errors of ``log`` with their context, paths under ``roots`` made relative.

    A log with no recognisable error (a crash of the tool, a message of another form) keeps its last lines.
    """
    text = _shorten_paths(log.replace("\r\n", "\n"), roots)
    lines = [line.rstrip() for line in text.splitlines()]
    errors = [g for g in _diagnostics(lines) if _is_error(g[0])]
    if not errors:
        meaningful = [line for line in lines if line.strip() and not _NOISE.match(line)]
        return _clip("\n".join(meaningful[-30:]))
    shown = [_clip_group(g) for g in errors[:max_errors]]
    unique_more = len(errors) - len(shown)
    out = "\n\n".join("\n".join(g) for g in shown)
    if unique_more > 0:
        out += f"\n\n... and {unique_more} more error{'s' if unique_more > 1 else ''} (fix the first ones first)"
    return _clip(out)


def _clip_group(group: list[str]) -> list[str]:
    if len(group) <= MAX_LINES_PER_ERROR:
        return group
    return group[:MAX_LINES_PER_ERROR] + [f"    ... ({len(group) - MAX_LINES_PER_ERROR} more lines)"]


def _clip(text: str) -> str:
    if len(text) <= MAX_CHARS:
        return text
    return text[: MAX_CHARS - 40].rstrip() + "\n... (log truncated)"
