"""``--devices 0,1``: the device units a command spreads its work over (``kforge run``, ``kforge bench``)."""

from __future__ import annotations

from ..errors import KForgeError


def parse_devices(text: str) -> tuple[int, ...]:
    """Distinct, non-negative device indices from ``0,1``; anything else is a KForgeError."""
    try:
        indices = tuple(int(part) for part in text.split(",") if part.strip())
    except ValueError:
        raise KForgeError(f"--devices {text!r}: expected device indices such as 0,1") from None
    if not indices or len(set(indices)) != len(indices) or min(indices) < 0:
        raise KForgeError(f"--devices {text!r}: expected distinct device indices such as 0,1")
    return indices
