"""Opening the run store with a reason for every way it can fail, and checking at the end of a run or bench that it
is still there and whole: a damaged store is an error, never a success."""

from __future__ import annotations

import os
import sqlite3
import threading
from pathlib import Path

from ..errors import KForgeError
from .guarded import guarded, store_error
from .schema import connect

_SQLITE_HEADER = b"SQLite format 3\0"


def open_store(runs_dir: Path, path: Path) -> sqlite3.Connection:
    """The connection to ``path`` in ``runs_dir`` (both made if missing)."""
    if runs_dir.exists() and not runs_dir.is_dir():
        raise KForgeError(f"the runs directory {runs_dir} is a file, not a directory",
                          hint="point --runs-dir, KFORGE_RUNS_DIR or runs_dir in kforge.toml at a directory")
    try:
        runs_dir.mkdir(parents=True, exist_ok=True)
    except OSError as exc:
        raise KForgeError(f"the runs directory {runs_dir} cannot be made: {exc.strerror}") from None
    if path.is_dir():
        raise KForgeError(f"the run store {path} is a directory, not a database file",
                          hint=f"move {path} away; KForge then makes a new store there")
    if not path.exists():
        _create_whole(runs_dir, path)
    if path.is_file() and path.stat().st_size == 0:
        raise KForgeError(f"the run store {path} is empty (0 bytes): it was truncated, or is not KForge's",
                          hint=f"move {path} away; KForge then makes a new store there (earlier runs are lost)")
    try:
        return connect(str(path))
    except sqlite3.Error as exc:
        why = _why_unopenable(runs_dir, path)
        if why:
            raise KForgeError(f"cannot open the run store {path}: {why} ({exc})") from None
        raise store_error(path, exc) from None


def _create_whole(runs_dir: Path, path: Path) -> None:
    """Make the store under another name and link it into place whole: SQLite creates an empty file at open and
    writes its header only with the first table, and a reader (``kforge runs`` beside a starting run) that opened the
    file in between would take it for a truncated store. If another process links its store first, theirs is kept."""
    staging = runs_dir / f".{path.name}.new-{os.getpid()}-{threading.get_ident()}"
    try:
        connect(str(staging)).close()
        os.link(staging, path)
    except (OSError, sqlite3.Error):  # linked first by another (FileExistsError), or the directory or file is at
        pass  # fault, which the plain open that follows names
    finally:
        for leftover in (staging, staging.with_name(staging.name + "-wal"), staging.with_name(staging.name + "-shm")):
            leftover.unlink(missing_ok=True)


def _why_unopenable(runs_dir: Path, path: Path) -> str:
    if not os.access(runs_dir, os.W_OK | os.X_OK):
        return f"the runs directory {runs_dir} is not writable (SQLite writes its journal beside the database)"
    if path.exists() and not os.access(path, os.R_OK | os.W_OK):
        return "the file is not readable and writable by this user"
    return ""


def check_store(path: Path, inode: int) -> None:
    """A KForgeError unless ``path`` is still the file with ``inode`` and passes ``PRAGMA quick_check``."""
    try:
        now = path.stat().st_ino
    except FileNotFoundError:
        raise KForgeError(f"the run store {path} was deleted while KForge used it: what was stored is lost",
                          hint="the run directories beside it keep every artifact") from None
    if now != inode:
        raise KForgeError(f"the run store {path} was replaced by another file while KForge used it")
    with open(path, "rb") as f:
        header = f.read(len(_SQLITE_HEADER))
    if header != _SQLITE_HEADER:  # overwritten: what SQLite still holds in its log may hide it for a while
        raise KForgeError(f"the run store {path} was overwritten while KForge used it (its header is gone)",
                          hint=f"move {path} away (KForge then starts a new one there); the run directories beside "
                               "it keep every artifact")
    with guarded(path):
        conn = sqlite3.connect(f"{path.resolve().as_uri()}?mode=ro", uri=True, timeout=30.0)
        try:
            problems = [row[0] for row in conn.execute("PRAGMA quick_check")]
        finally:
            conn.close()
    if problems != ["ok"]:
        raise KForgeError(f"the run store {path} is damaged: {'; '.join(problems[:5])}",
                          hint=f"move {path} away (KForge then starts a new one there); the run directories beside "
                               "it keep every artifact")
