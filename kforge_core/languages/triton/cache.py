"""Triton's on-disk cache of built kernels: where a worker points it, and what is in it (a kernel that appears
there during a stage was built in that stage; none appearing means every kernel came from the cache)."""

from __future__ import annotations

import os
from pathlib import Path


def use_cache_dir(default: Path) -> Path:
    """Point Triton at ``default`` unless ``TRITON_CACHE_DIR`` already names a directory; return the one in use."""
    return Path(os.environ.setdefault("TRITON_CACHE_DIR", str(default)))


def cache_entries(directory: Path) -> set[str]:
    """The names in Triton's cache directory (none when it does not exist yet)."""
    try:
        return {entry.name for entry in directory.iterdir()}
    except OSError:
        return set()
