"""Turning an exception the worker caught (its type and text) into a :class:`~kforge_core.records.Failure`, with
the device's words for its runtime's faults. How a worker process ended is ``exits.py``'s, in the KForge process.
"""

from __future__ import annotations

from pathlib import Path
from typing import TYPE_CHECKING

from ...records import Failure
from ...tracebacks import candidate_lines, exception_text
from ..memory_words import OUT_OF_MEMORY_PATTERNS
from .limit_hits import limit_reached

if TYPE_CHECKING:
    from ...devices.harness_device import HarnessDevice



def classify_exception(exc: BaseException, device: HarnessDevice | None = None) -> Failure:
    """The failure class of an exception raised by candidate code (RUNTIME unless it says otherwise):
    RESOURCE_LIMIT when it, or what caused it, met one of the worker's limits (``limit_hits``)."""
    if isinstance(exc, SystemExit):
        return Failure.EXIT
    if isinstance(exc, MemoryError) or type(exc).__name__ == "OutOfMemoryError":
        return Failure.OUT_OF_MEMORY
    if limit_reached(exc):
        return Failure.RESOURCE_LIMIT
    return classify_text(str(exc), device) or Failure.RUNTIME


def classify_text(text: str, device: HarnessDevice | None = None) -> Failure | None:
    """DEVICE_FAULT or OUT_OF_MEMORY when ``text`` says so (the device's runtime first), else None."""
    found = device.classify(text) if device is not None else None
    if found is not None:
        return found
    lowered = text.lower()
    if any(pattern in lowered for pattern in OUT_OF_MEMORY_PATTERNS):
        return Failure.OUT_OF_MEMORY
    return None


def candidate_traceback(exc: BaseException, workdir: Path, limit: int = 6) -> str:
    """The frames of ``exc``'s traceback that are in the candidate's own files, then the exception: its type and
    its whole message (:func:`~kforge_core.tracebacks.exception_text`).

    The generation agent needs the line of its code that failed, not the harness's frames.
    """
    lines = [f'  File "{c.file}", line {c.line}, in {c.function}\n    {c.text}'.rstrip()
             for c in candidate_lines(exc, workdir)[-limit:]]
    reached = limit_reached(exc)
    return "\n".join([*lines, exception_text(exc), *([f"resource_limit: {reached}"] if reached else [])])
