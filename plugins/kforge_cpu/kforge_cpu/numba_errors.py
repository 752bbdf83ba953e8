"""Telling Numba's compile errors from the candidate's runtime errors, and trimming Numba's messages to what a model
needs: the kind of error, the offending line of the candidate and the types involved.

Numba's messages list every overload it tried (often pages of them), carry terminal colour codes and repeat source
blocks; the part worth reading is the headline ("No implementation of function ... found for signature: >>>
add(float32, unicode_type)"), the reason an implementation was rejected, and the candidate's own lines.
"""

from __future__ import annotations

import re
import traceback
from pathlib import Path

from kforge_core.plugin_api import innermost_candidate_line

ANSI = re.compile(r"\x1b\[[0-9;]*m")
PIPELINE = re.compile(r"^\s*Failed in (\w+) mode pipeline \(step: ([^)]+)\)\s*$")
SITE_PACKAGES = re.compile(r"(/[^\s\"'()]*)?/(site|dist)-packages/")
ADDRESS = re.compile(r" at 0x[0-9a-f]+")
FILE_BLOCK = re.compile(r'^File "([^"]+)", line (\d+):')
MAX_LINES = 40
MAX_REASONS = 3

COMPILE_FRAMES = {"_compile_for_args", "compile", "_compile_core", "get_call_template"}


def is_compile_error(exc: BaseException) -> bool:
    """True when ``exc`` came out of a Numba compilation (typing, lowering, a missing library), not out of the
    candidate's compiled code running."""
    import numba.core.dispatcher
    from numba.core.errors import NumbaError

    if isinstance(exc, NumbaError):
        return True
    dispatcher_file = Path(numba.core.dispatcher.__file__).resolve()
    for frame in traceback.extract_tb(exc.__traceback__):
        if frame.name in COMPILE_FRAMES and Path(frame.filename).resolve() == dispatcher_file:
            return True
    return False


def clean(text: str, workdir: Path | None) -> str:
    """Without colour codes, object addresses, the site-packages prefix, and with the candidate's paths relative."""
    text = ANSI.sub("", text)
    if workdir is not None:
        for root in {str(workdir), str(workdir.resolve())}:
            text = text.replace(root.rstrip("/") + "/", "")
    text = SITE_PACKAGES.sub("", text)
    return ADDRESS.sub("", text)


class _Trimmer:
    """One pass over the lines of a Numba message, keeping what matters (see the module's docstring)."""

    def __init__(self) -> None:
        self.kept: list[str] = []
        self.steps: list[str] = []
        self.reasons: list[str] = []
        self.arguments: str | None = None
        self.seen_blocks: set[str] = set()
        self.omitted = 0

    def run(self, lines: list[str]) -> None:
        i = 0
        while i < len(lines):
            i = self._line(lines, i)

    def _line(self, lines: list[str], i: int) -> int:
        line = lines[i].rstrip()
        pipeline = PIPELINE.match(line)
        if pipeline:
            self.steps.append(pipeline.group(2))
        elif re.match(r"^\s*There are \d+ candidate implementations", line):
            return self._candidates(lines, i + 1)
        elif FILE_BLOCK.match(line):
            return self._file_block(lines, i)
        elif line.strip().startswith(("raised from ", "During: Pass ")):
            self.omitted += 1
        elif line.strip() or (self.kept and self.kept[-1]):
            self.kept.append(line)
        return i + 1

    def _candidates(self, lines: list[str], i: int) -> int:
        """Skip the list of overloads tried; keep the argument types and why implementations were rejected."""
        while i < len(lines) and (not lines[i].strip() or lines[i][:1].isspace()):
            text = lines[i].strip()
            if text.startswith("With argument(s):") and self.arguments is None:
                self.arguments = text.rstrip(":")
            elif text.startswith("Rejected as the implementation raised a specific error:"):
                reason = self._reason(lines, i + 1)
                if reason and reason not in self.reasons and len(self.reasons) < MAX_REASONS:
                    self.reasons.append(reason)
            self.omitted += 1
            i += 1
        if self.arguments:
            self.kept.append("  " + self.arguments)
        for reason in self.reasons:
            self.kept.append(f"  rejected because: {reason}")
        self.kept.append("")
        return i

    @staticmethod
    def _reason(lines: list[str], i: int) -> str:
        parts = []
        while i < len(lines) and len(parts) < 2:
            text = lines[i].strip()
            i += 1
            if not text or text.startswith(("raised from", "During:")):
                break
            pipeline = re.match(r"^(\w+): Failed in \w+ mode pipeline", text)
            if pipeline or PIPELINE.match(text):
                continue
            parts.append(text)
        return " ".join(parts)

    def _file_block(self, lines: list[str], i: int) -> int:
        """A source excerpt: kept once, and only when it is the candidate's file rather than Numba's."""
        block = [lines[i].rstrip()]
        i += 1
        while i < len(lines) and lines[i].strip() and not lines[i].startswith("During:"):
            block.append(lines[i].rstrip())
            i += 1
        text = "\n".join(block)
        path = FILE_BLOCK.match(block[0]).group(1)  # type: ignore[union-attr]
        if text in self.seen_blocks or path.startswith(("numba/", "llvmlite/", "<")):
            self.omitted += len(block)
            return i
        self.seen_blocks.add(text)
        self.kept.extend(block)
        self.kept.append("")
        return i


def trim_numba_message(message: str, workdir: Path | None = None) -> tuple[str, str]:
    """``(pipeline step, trimmed message)`` of a Numba error message."""
    trimmer = _Trimmer()
    trimmer.run(clean(message, workdir).splitlines())
    lines = trimmer.kept
    while lines and not lines[-1].strip():
        lines.pop()
    if len(lines) > MAX_LINES:
        trimmer.omitted += len(lines) - MAX_LINES
        lines = lines[:MAX_LINES]
    if trimmer.omitted:
        lines.append(f"[{trimmer.omitted} lines of Numba's message omitted]")
    step = trimmer.steps[0] if trimmer.steps else ""
    return step, "\n".join(lines)


def describe_compile_error(exc: BaseException, workdir: Path, compiling: str | None) -> str:
    """The log of a failed compilation: what was being compiled, from where, and Numba's trimmed message."""
    step, message = trim_numba_message(str(exc), workdir)
    kind = type(exc).__name__ + (f" ({step})" if step else "")
    header = f"Numba {kind} while compiling {compiling}" if compiling else f"Numba {kind}"
    lines = [header]
    site = innermost_candidate_line(exc, workdir)
    if site is not None:
        lines.append(f"called from {site.describe()}")
    lines.append(message)
    return "\n".join(lines).rstrip()


def describe_exception(exc: BaseException, workdir: Path, during: str) -> str:
    """A short log for an ordinary exception: its type and message, and the candidate's line that raised it."""
    text = clean("".join(traceback.format_exception_only(type(exc), exc)).strip(), workdir)
    lines = text.splitlines()
    if len(lines) > MAX_LINES:
        lines = lines[:MAX_LINES] + [f"[{len(lines) - MAX_LINES} more lines omitted]"]
    site = innermost_candidate_line(exc, workdir)
    where = f" at {site.describe()}" if site else ""
    return f"{during} raised{where}\n" + "\n".join(lines)
