"""Temporary scratch roots: made with their owner's name inside, and swept once their owner is gone.

A Harness without a given scratch root makes one in the system's temporary directory and removes it when it closes.
A KForge process killed outright (``kill -9``, the kernel's out-of-memory killer, a lost machine) cannot: its root,
with its workers' homes and their candidates' build directories, stays behind. So every root a Harness makes holds
an ``owner`` file naming its process (its pid and, where the system says, the process's start time, so a pid used
again by another process does not pass for the owner, and its pid namespace), and a new Harness removes the roots
whose owner is no longer running before it makes its own. A root made in another pid namespace (another container
sharing the temporary directory) is never judged: its pid means nothing here.

Only what this user made is touched: a real directory (never a link), owned by this user, whose ``owner`` file is a
regular file of the expected form. A root with no owner file is left alone (one being made this moment has none yet;
so has one left by an older KForge).
"""

from __future__ import annotations

import os
import shutil
import stat
import tempfile
from pathlib import Path

PREFIX = "kforge-harness-"
OWNER_FILE = "owner"
_OWNER_BYTES = 200  # "pid start namespace" fits; a longer file is not one KForge wrote
UNKNOWN = "-"  # a start time or a namespace the system does not say


def make_scratch_root() -> Path:
    """A new scratch root in the temporary directory, with this process named as its owner; the abandoned roots
    of killed KForge processes are removed first (:func:`sweep_abandoned`)."""
    sweep_abandoned(Path(tempfile.gettempdir()))
    root = Path(tempfile.mkdtemp(prefix=PREFIX))
    (root / OWNER_FILE).write_text(_owner_line(os.getpid()))
    return root


def sweep_abandoned(directory: Path) -> list[Path]:
    """Remove the scratch roots in ``directory`` whose owning process is gone; the roots removed."""
    removed = []
    try:
        names = [name for name in os.listdir(directory) if name.startswith(PREFIX)]
    except OSError:
        return removed
    for name in names:
        root = directory / name
        if _abandoned(root):
            shutil.rmtree(root, ignore_errors=True)  # fd-based on Linux: a link planted inside is removed, not followed
            removed.append(root)
    return removed


def _abandoned(root: Path) -> bool:
    try:
        info = os.lstat(root)
    except OSError:
        return False
    if not stat.S_ISDIR(info.st_mode) or info.st_uid != os.getuid():
        return False
    owner = _read_owner(root / OWNER_FILE)
    if owner is None:
        return False
    pid, started, namespace = owner
    return namespace == _pid_namespace() and not _running(pid, started)


def _read_owner(path: Path) -> tuple[int, str, str] | None:
    try:
        fd = os.open(path, os.O_RDONLY | getattr(os, "O_NOFOLLOW", 0) | getattr(os, "O_NONBLOCK", 0))
    except OSError:
        return None
    try:
        if not stat.S_ISREG(os.fstat(fd).st_mode):
            return None
        data = os.read(fd, _OWNER_BYTES + 1)
    finally:
        os.close(fd)
    words = data.decode("ascii", "replace").split()
    if len(data) > _OWNER_BYTES or len(words) != 3 or not words[0].isdigit() or int(words[0]) <= 0:
        return None
    return int(words[0]), words[1], words[2]


def _owner_line(pid: int) -> str:
    return f"{pid} {_start_time(pid) or UNKNOWN} {_pid_namespace()}\n"


def _running(pid: int, started: str) -> bool:
    """Whether process ``pid`` runs and is the one that started at ``started`` ("-": not known, any process)."""
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    except OSError:
        return True  # it exists, under another user
    now = _start_time(pid)
    return started == UNKNOWN or now is None or now == started


def _pid_namespace() -> str:
    """This process's pid namespace, as ``/proc`` names it (:data:`UNKNOWN` where there is no ``/proc``)."""
    try:
        return os.readlink("/proc/self/ns/pid").replace(" ", "")
    except OSError:
        return UNKNOWN


def _start_time(pid: int) -> str | None:
    """The process's start time in clock ticks since boot, from ``/proc`` (None where there is none)."""
    try:
        text = Path(f"/proc/{pid}/stat").read_text()
    except OSError:
        return None
    fields = text[text.rfind(")") + 2:].split()  # the command name, in parentheses, may hold spaces
    return fields[19] if len(fields) > 19 else None
