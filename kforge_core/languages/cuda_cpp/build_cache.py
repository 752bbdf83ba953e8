"""Building CUDA source into a shared library, once per distinct (source, flags, toolchain): a content-hash cache.

The compiled code includes no PyTorch header, so ``nvcc`` builds a small library in a second or two instead of a
minute. The cache key is the source, the nvcc command line, nvcc's version and the options' hash; the name a
candidate gives its library is not part of it, so the same source under another name is a cached load. Builds of
one key are serialised with a file lock, so parallel workers that build the same source build it once; different
keys build in parallel. A failed build is cached as well (the same source fails the same way); a build that timed
out or was killed is not.
"""

from __future__ import annotations

import fcntl
import hashlib
import os
import shutil
import subprocess
import time
from dataclasses import dataclass, field
from pathlib import Path

from .compile_log import trim_compile_log
from .toolchain import nvcc_version

# Bump when the build step or the helpers appended to every source change: old builds are then not reused.
BUILD_FORMAT = "kforge-cuda-1"

# Exported into every library so that launch errors are checked through the same runtime that launched.
HELPERS = """
extern "C" int kforge_cuda_last_error(void) { return (int)cudaGetLastError(); }
extern "C" const char* kforge_cuda_error_string(int code) { return cudaGetErrorString((cudaError_t)code); }
"""


class CudaBuildError(RuntimeError):
    """``nvcc`` rejected the source. ``log`` is trimmed for a model; ``full_log`` is everything nvcc said."""

    def __init__(self, name: str, log: str, full_log: str = "", cached: bool = False) -> None:
        super().__init__(f"nvcc failed to build {name!r}:\n{log}")
        self.name = name
        self.log = log
        self.full_log = full_log or log
        self.cached = cached


@dataclass(frozen=True)
class BuildConfig:
    """How every build in this process is made (set by the compile stage from the backend's options)."""

    nvcc: str
    arch: str
    cache_dir: Path
    opt_level: int = 3
    extra_flags: tuple[str, ...] = ()
    options_hash: str = ""
    timeout_s: float = 180.0

    def gencode(self) -> str:
        number = self.arch.removeprefix("sm_")
        return f"-gencode=arch=compute_{number},code=sm_{number}"

    def command(self, source_name: str, output: str) -> list[str]:
        return [
            self.nvcc, "-shared", "-Xcompiler", "-fPIC", f"-O{self.opt_level}", "-std=c++17", "-lineinfo",
            self.gencode(), *self.extra_flags, "-o", output, source_name,
        ]


@dataclass(frozen=True)
class BuildOutcome:
    library: Path
    key: str
    cached: bool
    seconds: float
    log: str = ""  # nvcc's warnings, trimmed


@dataclass
class _KeyDir:
    path: Path
    library: Path = field(init=False)
    error_log: Path = field(init=False)

    def __post_init__(self) -> None:
        self.library = self.path / "lib.so"
        self.error_log = self.path / "error.log"


def build_key(source: str, config: BuildConfig) -> str:
    """The content hash that names a build: source, command line, nvcc version, options, build format."""
    parts = [BUILD_FORMAT, source, " ".join(config.command("kernel.cu", "lib.so")[1:]),
             nvcc_version(config.nvcc), config.options_hash]
    return hashlib.sha256("\0".join(parts).encode()).hexdigest()[:32]


def build_library(source: str, name: str, config: BuildConfig) -> BuildOutcome:
    """The library built from ``source``: from the cache when it is there, else built now (under a lock).

    :raises CudaBuildError: when nvcc rejects the source (now, or when it did before).
    """
    start = time.perf_counter()
    key = build_key(source, config)
    entry = _KeyDir(config.cache_dir / key[:2] / key)
    cached = _cached(entry, name)
    if cached is not None:
        return BuildOutcome(cached, key, True, time.perf_counter() - start)
    entry.path.mkdir(parents=True, exist_ok=True)
    with open(entry.path / "lock", "w") as lock:
        fcntl.flock(lock, fcntl.LOCK_EX)  # another process may be building this key right now
        cached = _cached(entry, name)
        if cached is not None:
            return BuildOutcome(cached, key, True, time.perf_counter() - start)
        log = _run_nvcc(source, name, config, entry)
    return BuildOutcome(entry.library, key, False, time.perf_counter() - start, log)


def _cached(entry: _KeyDir, name: str) -> Path | None:
    if entry.library.is_file():
        return entry.library
    if entry.error_log.is_file():
        full = entry.error_log.read_text()
        raise CudaBuildError(name, trim_compile_log(full), full, cached=True)
    return None


def _run_nvcc(source: str, name: str, config: BuildConfig, entry: _KeyDir) -> str:
    work = entry.path / f"tmp-{os.getpid()}"
    work.mkdir(exist_ok=True)
    source_name = f"{name}.cu"
    (work / source_name).write_text(source + "\n" + HELPERS)
    command = config.command(source_name, "lib.so")
    try:
        done = subprocess.run(command, cwd=work, capture_output=True, text=True, timeout=config.timeout_s)
    except subprocess.TimeoutExpired:
        shutil.rmtree(work, ignore_errors=True)
        raise CudaBuildError(name, f"nvcc did not finish within {config.timeout_s:.0f} s") from None
    full = (done.stdout + done.stderr).strip()
    if done.returncode != 0 or not (work / "lib.so").is_file():
        if done.returncode > 0:  # a verdict on the source; a signal (negative code) is not
            entry.error_log.write_text(full)
        shutil.rmtree(work, ignore_errors=True)
        raise CudaBuildError(name, trim_compile_log(full, roots=(str(work),)), full)
    (entry.path / "source.cu").write_text(source)
    (entry.path / "command.txt").write_text(" ".join(command))
    os.replace(work / "lib.so", entry.library)  # atomic: a reader sees the whole library or none
    shutil.rmtree(work, ignore_errors=True)
    return trim_compile_log(full, roots=(str(work),)) if full else ""
