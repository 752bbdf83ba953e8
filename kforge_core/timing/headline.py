"""Which timing method gives the headline figure (``harness.timer``), and what it falls back to. No torch here:
the KForge process and the workers both decide with it."""

from __future__ import annotations

from ..device import TIMERS

FALLBACK = "wall"


def headline_timer(asked: str, offered: tuple[str, ...]) -> tuple[str, str]:
    """The timer whose figure is the headline, and a note when it is not the one ``asked`` for: a device without
    that timer falls back to the wall clock, which every device has.

    >>> headline_timer("events", ("wall",))
    ('wall', 'the device has no events timer: wall time is the headline figure instead')
    """
    if asked not in TIMERS:
        raise ValueError(f"unknown timer {asked!r}; use one of {', '.join(TIMERS)}")
    if asked in offered:
        return asked, ""
    return FALLBACK, f"the device has no {asked} timer: {FALLBACK} time is the headline figure instead"
