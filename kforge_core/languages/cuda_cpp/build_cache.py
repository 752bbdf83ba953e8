"""Building CUDA C++ source into a shared library, once per distinct (source, flags, toolchain): a content-hash
cache.

The compiled code includes no PyTorch header, so the compiler builds a small library in a second or two instead of
a minute. Which compiler, and with which flags, is the vendor's (:class:`BuildConfig`: ``nvcc`` and its
``-gencode`` on NVIDIA, ``hipcc`` and ``--offload-arch`` on AMD); the cache does not know. The cache key is the
source, the compiler's command line and version, the helpers appended to every source and the options' hash; the name a
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

# Bump when the build step changes: old builds are then not reused.
BUILD_FORMAT = "kforge-cuda-1"


class CudaBuildError(RuntimeError):
    """The compiler rejected the source. ``log`` is trimmed for a model; ``full_log`` is everything it said."""

    def __init__(self, name: str, log: str, full_log: str = "", cached: bool = False, tool: str = "the compiler") -> None:
        super().__init__(f"{tool} failed to build {name!r}:\n{log}")
        self.name = name
        self.log = log
        self.full_log = full_log or log
        self.cached = cached


@dataclass(frozen=True)
class BuildConfig:
    """How every build in this process is made (set by the compile stage from the backend's options).

    :param compiler: the compiler's path (``nvcc``, ``hipcc``).
    :param flags: everything between the compiler and ``-o``: a shared library, the optimisation level, the target
        (``-gencode=arch=compute_90,code=sm_90``), the user's extra flags.
    :param cache_dir: where builds are kept, one directory per key.
    :param version: the compiler's version line; part of every key.
    :param helpers: source appended to every build (the runtime's error readers); part of every key.
    :param options_hash: the backend options' digest; part of every key.
    :param timeout_s: wall-clock limit for one compiler run.
    """

    compiler: str
    flags: tuple[str, ...]
    cache_dir: Path
    version: str = ""
    helpers: str = ""
    options_hash: str = ""
    timeout_s: float = 180.0

    @property
    def tool(self) -> str:
        return Path(self.compiler).name

    def command(self, source_name: str, output: str) -> list[str]:
        return [self.compiler, *self.flags, "-o", output, source_name]


@dataclass(frozen=True)
class BuildOutcome:
    library: Path
    key: str
    cached: bool
    seconds: float
    log: str = ""  # the compiler's warnings, trimmed


@dataclass
class _KeyDir:
    path: Path
    library: Path = field(init=False)
    error_log: Path = field(init=False)

    def __post_init__(self) -> None:
        self.library = self.path / "lib.so"
        self.error_log = self.path / "error.log"


def build_key(source: str, config: BuildConfig) -> str:
    """The content hash that names a build: source, command line, compiler version, helpers, options, format."""
    parts = [BUILD_FORMAT, source, " ".join(config.command("kernel.cu", "lib.so")[1:]), config.version,
             config.options_hash, config.helpers]
    return hashlib.sha256("\0".join(parts).encode()).hexdigest()[:32]


def build_library(source: str, name: str, config: BuildConfig) -> BuildOutcome:
    """The library built from ``source``: from the cache when it is there, else built now (under a lock).

    :raises CudaBuildError: when the compiler rejects the source (now, or when it did before).
    """
    start = time.perf_counter()
    key = build_key(source, config)
    entry = _KeyDir(config.cache_dir / key[:2] / key)
    cached = _cached(entry, name, config.tool)
    if cached is not None:
        return BuildOutcome(cached, key, True, time.perf_counter() - start)
    entry.path.mkdir(parents=True, exist_ok=True)
    with open(entry.path / "lock", "w") as lock:
        fcntl.flock(lock, fcntl.LOCK_EX)  # another process may be building this key right now
        cached = _cached(entry, name, config.tool)
        if cached is not None:
            return BuildOutcome(cached, key, True, time.perf_counter() - start)
        log = _run_compiler(source, name, config, entry)
    return BuildOutcome(entry.library, key, False, time.perf_counter() - start, log)


def _cached(entry: _KeyDir, name: str, tool: str) -> Path | None:
    if entry.library.is_file():
        return entry.library
    if entry.error_log.is_file():
        full = entry.error_log.read_text()
        raise CudaBuildError(name, trim_compile_log(full), full, cached=True, tool=tool)
    return None


def _run_compiler(source: str, name: str, config: BuildConfig, entry: _KeyDir) -> str:
    work = entry.path / f"tmp-{os.getpid()}"
    work.mkdir(exist_ok=True)
    source_name = f"{name}.cu"
    (work / source_name).write_text(source + "\n" + config.helpers)
    command = config.command(source_name, "lib.so")
    try:
        done = subprocess.run(command, cwd=work, capture_output=True, text=True, timeout=config.timeout_s)
    except subprocess.TimeoutExpired:
        shutil.rmtree(work, ignore_errors=True)
        raise CudaBuildError(name, f"{config.tool} did not finish within {config.timeout_s:.0f} s",
                             tool=config.tool) from None
    full = (done.stdout + done.stderr).strip()
    if done.returncode != 0 or not (work / "lib.so").is_file():
        if done.returncode > 0:  # a verdict on the source; a signal (negative code) is not
            entry.error_log.write_text(full)
        shutil.rmtree(work, ignore_errors=True)
        raise CudaBuildError(name, trim_compile_log(full, roots=(str(work),)), full, tool=config.tool)
    (entry.path / "source.cu").write_text(source)
    (entry.path / "command.txt").write_text(" ".join(command))
    os.replace(work / "lib.so", entry.library)  # atomic: a reader sees the whole library or none
    shutil.rmtree(work, ignore_errors=True)
    return trim_compile_log(full, roots=(str(work),)) if full else ""
