"""Triton's compile errors: which exceptions are builds that failed, and what of their text the agent needs."""

from __future__ import annotations

MAX_LINES = 40
MAX_CHARS = 4000
# Raised by Triton's front end, code generator and assembler when a kernel does not build.
BUILD_ERRORS = ("CompilationError", "CompileTimeAssertionFailure", "OutOfResources", "PTXASError",
                "UnsupportedLanguageConstruct")


def is_build_error(exc: BaseException) -> bool:
    """True when ``exc`` is Triton saying that a kernel does not build (not an error of running it)."""
    kind = type(exc)
    return kind.__module__.startswith("triton") and kind.__name__ in BUILD_ERRORS


def trim_error(message: str) -> str:
    """A Triton ``CompilationError`` keeps its source excerpt and the error; deep internal frames go."""
    lines = [line.rstrip() for line in message.splitlines() if line.strip()]
    text = "\n".join(lines[:MAX_LINES])
    if len(text) <= MAX_CHARS:
        return text
    return text[: MAX_CHARS - 40].rstrip() + "\n... (log truncated)"
