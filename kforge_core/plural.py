"""Counts in words: "1 kernel", "2 kernels"."""

from __future__ import annotations


def counted(count: int, noun: str, plural: str | None = None) -> str:
    """``count`` and ``noun``, in the plural (``plural``, by default the noun with an ``s``) unless it is one."""
    return f"{count} {noun if count == 1 else plural or noun + 's'}"
