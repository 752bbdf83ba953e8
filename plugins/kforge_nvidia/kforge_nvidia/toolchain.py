"""Finding NVIDIA's tools (nvcc, ncu, compute-sanitizer) and asking nvcc its version. Never raises for a missing
tool: callers get None and say so."""

from __future__ import annotations

import functools
import os
import re
import shutil
import subprocess
from pathlib import Path


def _cuda_homes() -> list[Path]:
    homes = [os.environ.get(name) for name in ("CUDA_HOME", "CUDA_PATH")]
    return [Path(h) for h in homes if h] + [Path("/usr/local/cuda")]


def find_tool(name: str, configured: str = "") -> str | None:
    """The path of ``name``: the configured path if it exists, else on PATH, else under CUDA_HOME's bin."""
    if configured:
        return configured if Path(configured).is_file() else None
    found = shutil.which(name)
    if found:
        return found
    for home in _cuda_homes():
        for sub in ("bin", "nsight-compute", "compute-sanitizer"):
            candidate = home / sub / name
            if candidate.is_file():
                return str(candidate)
    return None


@functools.lru_cache(maxsize=8)
def nvcc_version(nvcc: str) -> str:
    """``nvcc --version``'s release line (``release 13.0, V13.0.88``); part of every build-cache key."""
    try:
        out = subprocess.run([nvcc, "--version"], capture_output=True, text=True, timeout=30).stdout
    except (OSError, subprocess.SubprocessError) as exc:
        return f"unknown ({type(exc).__name__})"
    match = re.search(r"release [^\n]+", out)
    return match.group(0).strip() if match else out.strip().splitlines()[-1] if out.strip() else "unknown"
