"""One process at a time per bench and per run: ``kforge bench --resume`` or ``kforge run --resume`` of something
another process is running is refused, naming that process. The locks are ``fcntl`` locks on files in
``RUNS_DIR/locks``; the kernel releases them when their process ends, however it ends."""

from __future__ import annotations

import contextlib
import fcntl
import os
import socket
from pathlib import Path
from typing import Iterator

from ..errors import KForgeError

LOCKS_DIR = "locks"


@contextlib.contextmanager
def held(runs_dir: Path, kind: str, item_id: str) -> Iterator[None]:
    """Hold the lock of ``kind`` (bench or run) ``item_id`` for the block; a KForgeError when another holds it."""
    path = Path(runs_dir) / LOCKS_DIR / f"{kind}-{item_id}.lock"
    path.parent.mkdir(parents=True, exist_ok=True)
    fd = os.open(path, os.O_RDWR | os.O_CREAT, 0o644)
    try:
        fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
    except BlockingIOError:
        holder = os.pread(fd, 200, 0).decode(errors="replace").strip() or "another process"
        os.close(fd)
        raise KForgeError(f"{kind} {item_id} is being run by {holder}; two processes would evaluate the same "
                          "problems and overwrite each other's results",
                          hint=f"wait for it to end (or stop it), then --resume {item_id} again") from None
    try:
        os.ftruncate(fd, 0)
        os.pwrite(fd, f"process {os.getpid()} on {socket.gethostname()}".encode(), 0)
        yield
    finally:
        os.close(fd)  # releases the lock
