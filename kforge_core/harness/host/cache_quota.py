"""What a candidate adds to the build caches (``harness.cache_quota_mb``): measured against a snapshot taken when it
began, builds kept, anything else removed at the end; a candidate that added more than the quota is refused
(``resource_limit``) and everything it added is removed.

Workers must write the build caches (a build made ahead, or by an earlier candidate, is found there), so the sandbox
binds them writable; this is what keeps a candidate from leaving gigabytes of its own there. A file counts as a
build when it lies where, and is named as, the tool that owns its cache puts its files (:data:`RECOGNISED`).

The walks never follow a symbolic link, and remove by directory descriptor (``os.fwalk``): a candidate that swaps a
directory for a link to another place makes KForge neither measure nor remove anything there. What other processes
of KForge build at the same time (builds ahead, the baselines' ``torch.compile``) lands in the same window, so it
counts against the candidate too; the default quota leaves room for that.
"""

from __future__ import annotations

import os
import stat
from dataclasses import dataclass, field
from pathlib import Path
from typing import Callable, Iterator

Parts = tuple[str, ...]  # a path below a cache's root, one name a part


def _suffix_in(*suffixes: str) -> Callable[[Parts], bool]:
    return lambda parts: parts[-1].endswith(suffixes)


def _deeper_than(depth: int) -> Callable[[Parts], bool]:
    return lambda parts: len(parts) > depth


_TORCH_EXTENSION = _suffix_in(".so", ".o", ".pyd", ".cpp", ".cu", ".cuh", ".h", ".hpp", ".c", ".cc", ".ninja", ".d")
_INDUCTOR = _suffix_in(".py", ".so", ".cpp", ".h", ".json", ".lock", ".best_config", ".cubin", ".ptx", ".llir",
                       ".ttir", ".ttgir", ".hsaco", ".o", ".pt", ".log", ".txt", ".spv", ".bc", ".ll", ".fatbin",
                       ".source", ".tmp")


def _torch_extensions(parts: Parts) -> bool:
    """``<version>/<name>/<file>`` (or ``<name>/<file>``): ninja's files, the sources, objects and library."""
    return len(parts) >= 2 and (parts[-1] in ("build.ninja", ".ninja_log", ".ninja_deps", "lock")
                                or _TORCH_EXTENSION(parts))


def _inductor(parts: Parts) -> bool:
    """Files in Inductor's hashed directories; its FX graph, AOT autograd and profile caches name entries by hash."""
    return len(parts) >= 2 and (parts[0] in ("fxgraph", "aotautograd", "pgo", "locks") or _INDUCTOR(parts))


def _triton(parts: Parts) -> bool:
    """A kernel's files in ``<hash>/`` (and Triton's temporary directory beside them while it writes)."""
    return len(parts) >= 2


def _json(parts: Parts) -> bool:
    return len(parts) == 1 and (parts[0].endswith(".json") or parts[0].endswith(".tmp"))


_NUMBA = _suffix_in(".nbi", ".nbc")
_ANY = _deeper_than(0)

# a tool's cache: what it keeps there. KForge's cache directory holds each under its name; a variable may name one
# elsewhere (its own root then)
RECOGNISED: dict[str, Callable[[Parts], bool]] = {
    "torch_extensions": _torch_extensions,  # torch.utils.cpp_extension (TORCH_EXTENSIONS_DIR)
    "inductor": _inductor,  # torch.compile (TORCHINDUCTOR_CACHE_DIR)
    "triton": _triton,  # TRITON_CACHE_DIR
    "nvidia": _deeper_than(2),  # kforge_nvidia: nvcc/<xx>/<key>/..., inline/<key>/...
    "cute": _deeper_than(1),  # the CuTe DSL's and kforge_cute's compiled kernels
    "xpu": lambda parts: parts[0] == "triton" and _triton(parts[1:]),
    "baselines": _json,  # KForge's baseline cache
    "cpu": _json,  # kforge_cpu's measured machine peaks
    "numba": _NUMBA,  # NUMBA_CACHE_DIR
    "cuda_compute": _ANY,  # the CUDA driver's JIT cache (CUDA_CACHE_PATH)
}
VARIABLE_KINDS = {"TORCH_EXTENSIONS_DIR": "torch_extensions", "TORCHINDUCTOR_CACHE_DIR": "inductor",
                  "TRITON_CACHE_DIR": "triton", "CUTE_DSL_CACHE_DIR": "cute", "NUMBA_CACHE_DIR": "numba",
                  "CUDA_CACHE_PATH": "cuda_compute"}


@dataclass(frozen=True)
class CacheRoot:
    """A directory of caches: ``kinds`` says which tool's cache lies where below it, the longest prefix first."""

    path: Path
    kinds: tuple[tuple[Parts, str], ...]

    def recognises(self, parts: Parts) -> bool:
        """Whether a file at ``parts`` below this root is one the tool whose cache holds it keeps."""
        for prefix, kind in self.kinds:
            if parts[:len(prefix)] == prefix:
                return len(parts) > len(prefix) and RECOGNISED[kind](parts[len(prefix):])
        return False


def cache_watch(cache_dir: Path, environ: dict[str, str], quota_mb: int) -> CacheWatch:
    """The watch over KForge's cache directory (its tools' caches under their names) and each cache a variable of
    the workers' environment names (``environ``, with the defaults workers get), wherever it lies."""
    from .sandbox import worker_environment

    env, cache_dir = worker_environment(environ, cache_dir), cache_dir.resolve()
    inside: dict[Parts, str] = {(name,): name for name in RECOGNISED}
    outside: list[CacheRoot] = []
    for name, kind in VARIABLE_KINDS.items():
        if env.get(name):
            path = Path(env[name]).resolve()
            if path.is_relative_to(cache_dir):
                inside[path.relative_to(cache_dir).parts] = kind
            elif not any(path.is_relative_to(r.path) for r in outside):
                outside.append(CacheRoot(path, (((), kind),)))
    longest_first = tuple(sorted(inside.items(), key=lambda item: -len(item[0])))
    return CacheWatch((CacheRoot(cache_dir, longest_first), *outside), quota_mb << 20)


@dataclass(frozen=True)
class Stamp:
    size: int
    mtime_ns: int
    inode: int


Snapshot = dict[tuple[int, str], Stamp]  # (root's index, the path below it) -> a file's stamp; directories: size -1


@dataclass
class Added:
    """What appeared or grew in the caches since a snapshot."""

    bytes: int = 0
    files: list[tuple[int, str, int, bool]] = field(default_factory=list)  # root, path, bytes, recognised
    directories: set[tuple[int, str]] = field(default_factory=set)

    @property
    def junk_bytes(self) -> int:
        return sum(size for _, _, size, known in self.files if not known)


@dataclass(frozen=True)
class Removed:
    files: int
    bytes: int
    examples: tuple[str, ...]


class CacheWatch:
    """The build caches of one harness, watched per candidate."""

    def __init__(self, roots: tuple[CacheRoot, ...], quota_bytes: int) -> None:
        self.roots = roots
        self.quota_bytes = quota_bytes

    def snapshot(self) -> Snapshot:
        found: Snapshot = {}
        for index, root in enumerate(self.roots):
            for path, st in _walk(root.path):
                found[(index, path)] = Stamp(-1 if stat.S_ISDIR(st.st_mode) else st.st_size, st.st_mtime_ns,
                                             st.st_ino)
        return found

    def added_since(self, before: Snapshot) -> Added:
        added = Added()
        for index, root in enumerate(self.roots):
            for path, st in _walk(root.path):
                was = before.get((index, path))
                if stat.S_ISDIR(st.st_mode):
                    if was is None:
                        added.directories.add((index, path))
                    continue
                grown = st.st_size if was is None or was.inode != st.st_ino or was.size < 0 else st.st_size - was.size
                if grown > 0 or was is None:
                    known = stat.S_ISREG(st.st_mode) and root.recognises(tuple(path.split("/")))
                    added.files.append((index, path, max(grown, 0), known))
                    added.bytes += max(grown, 0)
        return added

    def over_quota(self, added: Added) -> str:
        """A sentence naming the quota when ``added`` is past it, else ""."""
        if added.bytes <= self.quota_bytes:
            return ""
        return (f"the candidate added {added.bytes / (1 << 20):.1f} MiB to the build caches, past its quota of "
                f"{self.quota_bytes / (1 << 20):.0f} MiB (harness.cache_quota_mb): all it added is removed")

    def remove(self, added: Added, *, everything: bool) -> Removed:
        """Remove what ``added`` holds that is no build (``everything``: builds too), and the directories it made
        that this leaves empty."""
        doomed = {(i, p): size for i, p, size, known in added.files if everything or not known}
        count = total = 0
        examples: list[str] = []
        for index, root in enumerate(self.roots):
            emptied: set[str] = set()  # directories something was removed from
            for directory, names, fd in _walk_up(root.path):  # a directory's contents before the directory
                for name in names:
                    path = f"{directory}/{name}" if directory else name
                    try:
                        if (index, path) in doomed:
                            os.unlink(name, dir_fd=fd)
                            count, total = count + 1, total + doomed[(index, path)]
                            examples += [str(root.path / path)] if len(examples) < 3 else []
                        elif (index, path) in added.directories and (everything or path in emptied):
                            os.rmdir(name, dir_fd=fd)  # only when empty: a build may be filling it
                        else:
                            continue
                    except OSError:
                        continue
                    emptied.add(directory)
        return Removed(count, total, tuple(examples))


def _walk(root: Path) -> Iterator[tuple[str, os.stat_result]]:
    """(path below ``root``, its lstat) of everything under ``root``; links are listed, never followed."""
    if not root.is_dir() or root.is_symlink():
        return
    top = str(root)
    for directory, dirs, files, fd in os.fwalk(top, follow_symlinks=False):
        below = directory[len(top) + 1:]
        for name in (*dirs, *files):
            try:
                st = os.stat(name, dir_fd=fd, follow_symlinks=False)
            except OSError:
                continue
            yield (f"{below}/{name}" if below else name), st


def _walk_up(root: Path) -> Iterator[tuple[str, list[str], int]]:
    """(directory below ``root``, the names in it, its descriptor), deepest first, links never followed."""
    if not root.is_dir() or root.is_symlink():
        return
    top = str(root)
    for directory, dirs, files, fd in os.fwalk(top, topdown=False, follow_symlinks=False):
        yield directory[len(top) + 1:], [*files, *dirs], fd
