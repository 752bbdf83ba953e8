"""CuTe DSL and MLIR errors, trimmed to what a model needs: the error and the candidate's own lines.

The DSL renders most mistakes itself (``error[TYPE_UNSTABLE_JOIN]: ...``, ``--> model_new.py:8`` and the source
lines) in colour; that is kept, without the colour, the absolute paths and the advice to rerun with a stack trace.
IR that fails MLIR's verifier comes back as "The compiler could not build valid IR for this code" with the
verifier's message cut short and its location ``unknown``; there the verifier's own message is used, with the
candidate's lines read from its MLIR call-site locations (the compile is retried with those on) and the operation's
IR dropped. A Python exception raised while a kernel was traced (a ``NameError`` in the kernel body) shows the
candidate's frames. Works on recorded text too: an exception is first turned into :class:`ErrorPart` records.
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from pathlib import Path

from kforge_core.plugin_api import CandidateLine, candidate_lines

MAX_CHARS = 4000
_ANSI = re.compile(r"\x1b\[[0-9;]*m")
_FRAME_LOCATION = re.compile(r'"(?P<name>[^"]+)"\("(?P<path>[^"]+)":(?P<line>\d+):(?P<col>\d+)')
_POINTER = re.compile(r"^\s*-->\s+(?P<path>\S+?):\d+")
_EXCERPT = re.compile(r"^\s*(?:\d+\s*)?\|")  # "  7 |     code" and "    |     ^"
_NOISE_LINES = ("Re-run with CUTE_DSL_SHOW_STACKTRACE", "see current operation:")


@dataclass(frozen=True)
class ErrorPart:
    """One exception of a chain (outermost first): its type's qualified name, its message and the candidate's
    frames in its traceback (outermost first)."""

    kind: str
    message: str
    frames: tuple[CandidateLine, ...] = ()

    @property
    def short_kind(self) -> str:
        return self.kind.rsplit(".", 1)[-1]


def error_chain(exc: BaseException, workdir: Path) -> tuple[ErrorPart, ...]:
    """``exc`` and the exceptions it came from (``__cause__``, else ``__context__``), outermost first, each with
    its frames in the candidate's files (under ``workdir``)."""
    parts, seen = [], set()
    current: BaseException | None = exc
    while current is not None and id(current) not in seen:
        seen.add(id(current))
        kind = type(current)
        parts.append(ErrorPart(f"{kind.__module__}.{kind.__qualname__}", str(current),
                               tuple(candidate_lines(current, workdir))))
        current = current.__cause__ or current.__context__
    return tuple(parts)


def is_dsl_error(chain: tuple[ErrorPart, ...]) -> bool:
    """Whether the chain holds an error of the DSL or of its MLIR compiler (not a plain Python one)."""
    return any(p.kind.startswith("cutlass.") and p.short_kind != "DSLCudaRuntimeError" for p in chain)


def names_candidate(chain: tuple[ErrorPart, ...], workdir: Path | str | None) -> bool:
    """Whether any message of the chain points at a file of the candidate (under ``workdir``)."""
    if workdir is None:
        return False
    root = str(workdir).rstrip("/") + "/"
    return any(root in p.message for p in chain)


def _clean(text: str, workdir: str) -> str:
    text = _ANSI.sub("", text)
    return text.replace(workdir.rstrip("/") + "/", "") if workdir else text


def _source_line(workdir: str, path: str, line: int) -> str:
    try:
        return (Path(workdir) / path).read_text().splitlines()[line - 1].strip()
    except (OSError, IndexError):
        return ""


def split_location(text: str) -> tuple[str, str]:
    """``callsite("k"("m.py":8:4 to :90) at ...): message`` -> (the location, the message)."""
    if text.startswith("unknown: "):
        return "", text[len("unknown: "):]
    depth, quoted = 0, False
    for i, char in enumerate(text):
        if char == '"':
            quoted = not quoted
        elif not quoted and char == "(":
            depth += 1
        elif not quoted and char == ")":
            depth -= 1
        elif not quoted and depth == 0 and text.startswith(": ", i):
            return text[:i], text[i + 2:]
    return "", text


def _verifier_diagnostics(message: str) -> list[tuple[str, str]]:
    """(location, message) of each ``error:`` line an MLIRError holds; notes and the operation's IR go."""
    found = []
    for line in message.splitlines():
        stripped = line.strip()
        if stripped.startswith("error: "):
            found.append(split_location(stripped[len("error: "):]))
    return found


def _candidate_frames(location: str, workdir: str) -> list[CandidateLine]:
    """The candidate's frames named in an MLIR call-site location, innermost first."""
    frames = []
    for match in _FRAME_LOCATION.finditer(location):
        path = match.group("path")
        if workdir and path.startswith(workdir.rstrip("/") + "/"):
            relative = path[len(workdir.rstrip("/")) + 1:]
            line = int(match.group("line"))
            frames.append(CandidateLine(relative, line, match.group("name"), _source_line(workdir, relative, line)))
    return frames


def _frame_lines(frames: list[CandidateLine]) -> list[str]:
    """Innermost first: ``at file:line in function: text``, then the lines it was called from."""
    lines = []
    for i, frame in enumerate(frames):
        lead = "  at" if i == 0 else "  called from"
        lines.append(f"{lead} {frame.file}:{frame.line} in {frame.function}" + (f": {frame.text}" if frame.text
                                                                                 else ""))
    return lines


def _from_verifier(chain: tuple[ErrorPart, ...], workdir: str) -> str | None:
    mlir = next((p for p in chain if p.short_kind == "MLIRError"), None)
    if mlir is None:
        return None
    diagnostics = _verifier_diagnostics(mlir.message)
    if not diagnostics:
        return None
    head = mlir.message.strip().splitlines()[0].rstrip(":")
    head = "MLIR verification failed" if head == "Verification failed" else f"MLIR: {head}"
    lines = []
    for location, text in diagnostics[:3]:
        lines.append(f"{head}: {_clean(text, workdir)}")
        lines.extend(_frame_lines(_candidate_frames(location, workdir)))
    return "\n".join(lines)


def _rendered(part: ErrorPart, workdir: str) -> tuple[str, bool]:
    """The DSL's own rendering without colour, noise, or a source excerpt from outside the candidate (the DSL
    takes the first frame outside itself for the author's, which can be KForge's); and whether an excerpt of the
    candidate's was kept."""
    lines = [line.rstrip() for line in _clean(part.message, workdir).strip("\n").splitlines()]
    kept, skipping, located = [], False, False
    for line in lines:
        pointer = _POINTER.match(line)
        if pointer:
            skipping = pointer.group("path").startswith("/")
            located = located or not skipping
            if skipping:
                continue
        elif skipping and _EXCERPT.match(line):
            continue
        else:
            skipping = False
        if not any(noise in line for noise in _NOISE_LINES):
            kept.append(line)
    return "\n".join(kept), located


def _python_frames(chain: tuple[ErrorPart, ...]) -> list[CandidateLine]:
    """The candidate's own frames of the innermost exception that has any, innermost first."""
    for part in reversed(chain):
        if part.frames:
            return list(reversed(part.frames))
    return []


def describe_dsl_error(chain: tuple[ErrorPart, ...], workdir: Path | str | None,
                       located: tuple[ErrorPart, ...] = ()) -> str:
    """The log of a failed compile: ``chain`` is the error; ``located`` the same compile with MLIR source
    locations on, when the first did not name the candidate's lines."""
    root = str(workdir or "")
    verifier = _from_verifier(located, root) or _from_verifier(chain, root)
    if verifier is not None:
        return _clip(verifier)
    outer = chain[0]
    if outer.kind.startswith("cutlass."):
        text, located = _rendered(outer, root)
        if not located:
            text += "\n" + "\n".join(_frame_lines(_python_frames(chain)))
        return _clip(text.strip())
    # a plain Python exception out of the traced code
    text = f"{outer.short_kind}: {_clean(outer.message, root)}"
    return _clip("\n".join([text, *_frame_lines(_python_frames(chain))]))


def _clip(text: str) -> str:
    if len(text) <= MAX_CHARS:
        return text
    return text[: MAX_CHARS - 40].rstrip() + "\n... (message truncated)"
