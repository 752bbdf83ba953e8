"""The run store's connection, with every SQLite failure turned into a :class:`KForgeError` that names the database
file and says what to do: a damaged, deleted or unwritable store is the user's to fix, never a traceback. A broken
constraint (``sqlite3.IntegrityError``: a step stored twice) is KForge's own bug and stays one."""

from __future__ import annotations

import contextlib
import sqlite3
from pathlib import Path
from typing import Any, Iterator

from ..errors import KForgeError


def store_error(path: Path, exc: sqlite3.Error) -> KForgeError:
    """The message for ``exc``, raised by SQLite on the store ``path``."""
    damaged = isinstance(exc, sqlite3.DatabaseError) and any(
        words in str(exc) for words in ("malformed", "not a database", "disk I/O error", "no such table"))
    if damaged:
        return KForgeError(f"the run store {path} is damaged ({exc})",
                           hint=f"move {path} away (KForge then starts a new one there); the run directories beside "
                                "it keep every artifact")
    return KForgeError(f"the run store {path} failed: {exc}",
                       hint="check that the runs directory is on a local, writable disk with space left")


@contextlib.contextmanager
def guarded(path: Path) -> Iterator[None]:
    """Within the block, a SQLite failure on ``path`` is a KForgeError (a broken constraint stays as it is)."""
    try:
        yield
    except sqlite3.IntegrityError:
        raise
    except sqlite3.Error as exc:
        raise store_error(path, exc) from None


class GuardedCursor:
    def __init__(self, cursor: sqlite3.Cursor, path: Path) -> None:
        self._cursor = cursor
        self._path = path

    def fetchone(self) -> Any:
        with guarded(self._path):
            return self._cursor.fetchone()

    def fetchall(self) -> list[Any]:
        with guarded(self._path):
            return self._cursor.fetchall()

    def __iter__(self) -> Iterator[Any]:
        return iter(self.fetchall())

    @property
    def rowcount(self) -> int:
        return self._cursor.rowcount


class GuardedConnection:
    """A ``sqlite3.Connection`` for the statements the store runs (``execute``, ``with`` for a transaction)."""

    def __init__(self, conn: sqlite3.Connection, path: Path) -> None:
        self._conn = conn
        self.path = path

    def execute(self, sql: str, parameters: Any = ()) -> GuardedCursor:
        with guarded(self.path):
            return GuardedCursor(self._conn.execute(sql, parameters), self.path)

    def __enter__(self) -> GuardedConnection:
        self._conn.__enter__()
        return self

    def __exit__(self, *exc_info: Any) -> None:
        with guarded(self.path):
            self._conn.__exit__(*exc_info)

    def commit(self) -> None:
        with guarded(self.path):
            self._conn.commit()

    def close(self) -> None:
        self._conn.close()
