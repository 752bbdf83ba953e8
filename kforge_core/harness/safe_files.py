"""Files that KForge's own processes open in a directory a worker can write, opened without following a link.

A candidate can plant a symbolic link wherever its worker may write. KForge's own processes (the KForge process, and
the referee worker, which never runs candidate code) must never follow one: a link named like a file they read
would hand them a file of the candidate's choosing (a credential, ``/proc/self/environ``: their own environment),
and one named like a file they write would have them overwrite any file they can write. So every path here is
resolved from a trusted directory (the ``anchor``, which no worker can replace) with no link followed on the way,
and the file opened must be a regular file with one name (a hard link is a second name: refused as well):

* on Linux 5.6 and later, ``openat2`` with ``RESOLVE_BENEATH | RESOLVE_NO_SYMLINKS | RESOLVE_NO_MAGICLINKS`` (the
  kernel refuses every link, and ``..`` out of the anchor, in one call);
* elsewhere (macOS, older kernels, a seccomp filter that forbids ``openat2``), one ``openat`` per component with
  ``O_NOFOLLOW`` (and ``O_DIRECTORY`` for directories), ``..`` refused, and an ``fstat`` of what was opened.

A link found is :class:`PlantedLink`, which names the path: the caller raises the ``tampering`` flag against the
candidate whose directory it was in; never an error of KForge.

The places that still need this, and why (everything else the KForge process reads of a worker's comes through
file descriptors it opened itself, ``host/worker_output.py``, or lies where no worker can write, such as the
problem copy and the baseline cache):

* the referee reads, and removes, the outputs a candidate's worker shipped (``worker/output_files.py``): they lie in
  that candidate's scratch directory, which its worker writes;
* the KForge process writes a build-ahead child's request into the child's directory and reads its answer from
  there (``host/prebuild.py``): the child writes that directory;
* the KForge process copies a candidate's captured output into its scratch directory when the scratch root is kept
  (``kforge eval --keep``): the candidate's worker writes that directory.
"""

from __future__ import annotations

import ctypes
import errno
import functools
import os
import stat
import sys
from pathlib import Path, PurePath
from typing import BinaryIO

_RESOLVE_NO_MAGICLINKS, _RESOLVE_NO_SYMLINKS, _RESOLVE_BENEATH = 0x02, 0x04, 0x08
_SYS_OPENAT2 = 437  # the same number on every architecture that has it (the generic system call table)
_CLOEXEC = getattr(os, "O_CLOEXEC", 0)
_NOFOLLOW = getattr(os, "O_NOFOLLOW", 0)
_DIRECTORY = getattr(os, "O_DIRECTORY", 0)
_NONBLOCK = getattr(os, "O_NONBLOCK", 0)  # a reader never waits on a FIFO planted where a file should be (and a
# regular file, the only kind read, ignores it)
# what an open of a link with O_NOFOLLOW, or of a path through one with RESOLVE_NO_SYMLINKS, fails with (FreeBSD
# says EMLINK); EXDEV: RESOLVE_BENEATH saw the path leave the anchor
_LINK_ERRORS = (errno.ELOOP, errno.EMLINK, errno.EXDEV)


class PlantedLink(OSError):
    """A path that goes through a link, leaves its anchor, or names something other than a regular file with one
    name: what a candidate planted, never what KForge wrote."""

    def __init__(self, path: PurePath, why: str = "a symbolic link") -> None:
        super().__init__(errno.ELOOP, f"{path} is {why}, not the file the harness expects there")
        self.path = path
        self.why = why

    def __str__(self) -> str:
        return str(self.strerror)


class _OpenHow(ctypes.Structure):
    _fields_ = [("flags", ctypes.c_uint64), ("mode", ctypes.c_uint64), ("resolve", ctypes.c_uint64)]


@functools.cache
def _libc() -> ctypes.CDLL | None:
    if not sys.platform.startswith("linux"):
        return None
    try:
        return ctypes.CDLL(None, use_errno=True)
    except OSError:
        return None


def _openat2(dir_fd: int, relative: str, flags: int, mode: int) -> int | None:
    """``openat2`` with nothing followed and nothing outside ``dir_fd``; None where the kernel does not have it."""
    libc = _libc()
    if libc is None or not openat2_available():
        return None
    how = _OpenHow(flags | _CLOEXEC, mode if flags & os.O_CREAT else 0,
                   _RESOLVE_BENEATH | _RESOLVE_NO_SYMLINKS | _RESOLVE_NO_MAGICLINKS)
    fd = libc.syscall(ctypes.c_long(_SYS_OPENAT2), ctypes.c_int(dir_fd), os.fsencode(relative), ctypes.byref(how),
                      ctypes.c_size_t(ctypes.sizeof(how)))
    if fd < 0:
        number = ctypes.get_errno()
        raise OSError(number, os.strerror(number), relative)
    return fd


@functools.cache
def openat2_available() -> bool:
    """Whether this kernel answers ``openat2`` (Linux 5.6 and later, where no seccomp filter forbids it)."""
    libc = _libc()
    if libc is None:
        return False
    how = _OpenHow(os.O_RDONLY | _DIRECTORY | _CLOEXEC, 0, _RESOLVE_BENEATH | _RESOLVE_NO_SYMLINKS)
    fd = libc.syscall(ctypes.c_long(_SYS_OPENAT2), ctypes.c_int(-100), b"/", ctypes.byref(how),  # AT_FDCWD
                      ctypes.c_size_t(ctypes.sizeof(how)))
    if fd >= 0:
        os.close(fd)
        return True
    # "/" is absolute, so RESOLVE_BENEATH refuses it (EXDEV): the call itself exists. ENOSYS, EPERM (a seccomp
    # filter), EINVAL (a flag this kernel does not know): it cannot serve
    return ctypes.get_errno() == errno.EXDEV


def _parts(relative: PurePath | str) -> list[str]:
    parts = PurePath(relative).parts
    if not parts or PurePath(relative).is_absolute() or any(p in ("..", ".", "") for p in parts):
        raise ValueError(f"{relative} is not a plain relative path")
    return list(parts)


def open_beneath(anchor: Path, relative: PurePath | str, flags: int = os.O_RDONLY, mode: int = 0o600, *,
                 use_openat2: bool = True) -> int:
    """A file descriptor of ``anchor / relative``, reached with no link followed and never leaving ``anchor``.

    :param flags: ``os.open`` flags; ``O_NOFOLLOW`` and ``O_CLOEXEC`` are added.
    :param use_openat2: False takes the per-component way even where ``openat2`` exists (both are tested).
    :raises PlantedLink: a component is a link (named in it), or the path would leave the anchor.
    :raises OSError: anything else (the file is missing, say).
    """
    parts = _parts(relative)
    anchor_fd = os.open(anchor, os.O_RDONLY | _DIRECTORY | _CLOEXEC)
    try:
        try:
            fd = _openat2(anchor_fd, os.path.join(*parts), flags | _NOFOLLOW, mode) if use_openat2 else None
            return fd if fd is not None else _walk(anchor_fd, parts, flags, mode)
        except OSError as exc:
            # ENOTDIR: an O_DIRECTORY open of a link, per component (or a file where a directory was expected)
            if exc.errno in (*_LINK_ERRORS, errno.ENOTDIR):
                link = _first_link(anchor_fd, parts)
                if link is not None:
                    raise PlantedLink(anchor / link) from None
                if exc.errno in _LINK_ERRORS:
                    raise PlantedLink(anchor / PurePath(*parts)) from None
            raise
    finally:
        os.close(anchor_fd)


def _walk(anchor_fd: int, parts: list[str], flags: int, mode: int) -> int:
    directory = os.dup(anchor_fd)
    try:
        for part in parts[:-1]:
            inner = os.open(part, os.O_RDONLY | _DIRECTORY | _NOFOLLOW | _CLOEXEC, dir_fd=directory)
            os.close(directory)
            directory = inner
        return os.open(parts[-1], flags | _NOFOLLOW | _CLOEXEC, mode, dir_fd=directory)
    finally:
        os.close(directory)


def _first_link(anchor_fd: int, parts: list[str]) -> PurePath | None:
    """The first component of ``parts`` that is a link (relative to the anchor), or None."""
    directory = os.dup(anchor_fd)
    try:
        for number, part in enumerate(parts):
            info = os.stat(part, dir_fd=directory, follow_symlinks=False)
            if stat.S_ISLNK(info.st_mode):
                return PurePath(*parts[:number + 1])
            if not stat.S_ISDIR(info.st_mode) or number == len(parts) - 1:
                return None
            inner = os.open(part, os.O_RDONLY | _DIRECTORY | _NOFOLLOW | _CLOEXEC, dir_fd=directory)
            os.close(directory)
            directory = inner
    except OSError:
        return None
    finally:
        os.close(directory)
    return None


def open_directory(anchor: Path, relative: PurePath | str, *, use_openat2: bool = True) -> int:
    """A file descriptor of the directory ``anchor / relative`` (``"."`` is the anchor itself), no link followed."""
    if str(relative) in ("", "."):
        return os.open(anchor, os.O_RDONLY | _DIRECTORY | _CLOEXEC)
    return open_beneath(anchor, relative, os.O_RDONLY | _DIRECTORY, use_openat2=use_openat2)


def checked_regular(fd: int, where: PurePath) -> os.stat_result:
    """``fd``'s status, when it is a regular file with one name; else it is closed and PlantedLink raised."""
    info = os.fstat(fd)
    if not stat.S_ISREG(info.st_mode) or info.st_nlink != 1:
        os.close(fd)
        raise PlantedLink(where, "not a regular file" if not stat.S_ISREG(info.st_mode) else
                          "a second name of another file (a hard link)")
    return info


def read_beneath(anchor: Path, relative: PurePath | str, limit: int | None = None) -> bytes:
    """The bytes of the regular file ``anchor / relative`` (its first ``limit``), reached with no link followed.
    Raises PlantedLink or OSError."""
    fd = open_beneath(anchor, relative, os.O_RDONLY | _NONBLOCK)
    checked_regular(fd, anchor / relative)
    with os.fdopen(fd, "rb") as handle:
        return handle.read() if limit is None else handle.read(limit)


def create_beneath(anchor: Path, relative: PurePath | str, *, mode: int = 0o644) -> BinaryIO:
    """A new file ``anchor / relative`` open for writing. Whatever had that name (a file, a link) is removed first
    (the name, never what a link points to), and the file is created exclusively: nothing is written through a
    name a worker made. Its directory is reached with no link followed. Raises PlantedLink or OSError."""
    parts = _parts(relative)
    directory = open_directory(anchor, PurePath(*parts[:-1]))
    try:
        try:
            os.unlink(parts[-1], dir_fd=directory)  # unlink never follows a link: it removes the link itself
        except FileNotFoundError:
            pass
        fd = os.open(parts[-1], os.O_WRONLY | os.O_CREAT | os.O_EXCL | _NOFOLLOW | _CLOEXEC, mode, dir_fd=directory)
    finally:
        os.close(directory)
    return os.fdopen(fd, "wb")


def unlink_beneath(anchor: Path, relative: PurePath | str) -> None:
    """Remove the name ``anchor / relative`` (a link itself, never its target); its directory is reached with no
    link followed. A missing name is no error."""
    parts = _parts(relative)
    directory = open_directory(anchor, PurePath(*parts[:-1]))
    try:
        os.unlink(parts[-1], dir_fd=directory)
    except FileNotFoundError:
        pass
    finally:
        os.close(directory)


def take_beneath(anchor: Path, relative: PurePath | str) -> int:
    """A descriptor of the regular file ``anchor / relative`` (one name, reached with no link followed), whose name
    is removed once it is open: the file is read once, through this descriptor. Raises PlantedLink or OSError."""
    parts = _parts(relative)
    directory = open_directory(anchor, PurePath(*parts[:-1]))
    try:
        try:
            fd = os.open(parts[-1], os.O_RDONLY | _NONBLOCK | _NOFOLLOW | _CLOEXEC, dir_fd=directory)
        except OSError as exc:
            if exc.errno in _LINK_ERRORS:
                raise PlantedLink(anchor / PurePath(*parts)) from None
            raise
        checked_regular(fd, anchor / PurePath(*parts))
        os.unlink(parts[-1], dir_fd=directory)  # the name only: what this process holds open stays readable
    finally:
        os.close(directory)
    return fd
