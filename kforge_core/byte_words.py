"""Sizes in words: ``512 B``, ``48 KiB``, ``8.02 GiB``."""

from __future__ import annotations


def byte_words(nbytes: int) -> str:
    """``nbytes`` in the largest binary unit it reaches, to three significant figures (whole units from 100 up)."""
    for unit, power in (("GiB", 30), ("MiB", 20), ("KiB", 10)):
        if nbytes >= 1 << power:
            value = nbytes / (1 << power)
            return f"{value:.3g} {unit}" if value < 100 else f"{value:.0f} {unit}"
    return f"{nbytes} B"
