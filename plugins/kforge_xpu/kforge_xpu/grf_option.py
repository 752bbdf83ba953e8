"""How the installed Intel Triton spells its large register file option, read from its source without importing it.

Releases up to early 2025 accept ``grf_mode='large'`` (and silently ignore other values); later ones accept
``'128'``, ``'256'``, ``'512'``, ``'auto'`` and ``'default'`` and reject anything else. ``'256'`` is right for the
later ones and harmless for the earlier ones, so it is the spelling given when the backend is not installed.
"""

from __future__ import annotations

import importlib.util
from pathlib import Path

MODERN = "grf_mode=\"256\""
LEGACY = "grf_mode=\"large\""


def intel_compiler_source() -> str | None:
    """The text of ``triton/backends/intel/compiler.py``, or None when that backend is not installed."""
    spec = importlib.util.find_spec("triton")
    for location in (spec.submodule_search_locations or ()) if spec else ():
        path = Path(location) / "backends" / "intel" / "compiler.py"
        if path.is_file():
            return path.read_text(errors="replace")
    return None


def grf_option(compiler_source: str | None) -> str:
    """The launch option to write for 256 registers per thread, for the backend whose compiler source is given."""
    if compiler_source is not None and "'large'" in compiler_source and "'256'" not in compiler_source:
        return LEGACY
    return MODERN
