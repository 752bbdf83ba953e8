"""The kernel index on disk: ``RUNS_DIR/retrieval.db``, beside the run store it describes.

One SQLite table of :class:`~kforge_core.retrieval.entry.IndexedKernel` records (JSON), keyed by where each came
from; several runs of a bench may add to it at once. The BM25 index is not stored: it is built in memory from these
records when a search needs it (a few milliseconds for thousands of kernels).
"""

from __future__ import annotations

import json
import sqlite3
from pathlib import Path

from ..codec import record_from_json, to_json
from ..errors import KForgeError
from .entry import IndexedKernel

INDEX_NAME = "retrieval.db"
_TABLE = """
CREATE TABLE IF NOT EXISTS kernels (
    key     TEXT PRIMARY KEY,            -- run:RUN_ID or extra:PATH
    origin  TEXT NOT NULL,               -- "runs", or the extra folder it was read from
    record  TEXT NOT NULL                -- the IndexedKernel as JSON
);
"""


def index_path(runs_dir: Path) -> Path:
    return Path(runs_dir) / INDEX_NAME


class KernelIndexStore:
    """The stored index of one runs directory; a damaged file is reported as such, never half read."""

    def __init__(self, runs_dir: Path) -> None:
        self.path = index_path(runs_dir)
        Path(runs_dir).mkdir(parents=True, exist_ok=True)
        try:
            self._conn = sqlite3.connect(str(self.path), timeout=30.0)
            self._conn.execute("PRAGMA journal_mode=WAL")
            with self._conn:
                self._conn.executescript(_TABLE)
        except sqlite3.DatabaseError as exc:
            raise self._damaged(exc) from None

    def _damaged(self, exc: Exception) -> KForgeError:
        return KForgeError(f"the kernel index {self.path} is damaged: {exc}",
                           hint=f"delete it and rebuild it from the runs with `kforge index --runs-dir "
                                f"{self.path.parent}`")

    def close(self) -> None:
        self._conn.close()

    def __enter__(self) -> KernelIndexStore:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()

    def put(self, kernels: list[IndexedKernel], origin: str) -> None:
        with self._conn:
            self._conn.executemany(
                "INSERT OR REPLACE INTO kernels (key, origin, record) VALUES (?, ?, ?)",
                [(k.key, origin, json.dumps(to_json(k))) for k in kernels])

    def drop(self, origin: str) -> None:
        """Forget every kernel read from ``origin`` (before it is read again)."""
        with self._conn:
            self._conn.execute("DELETE FROM kernels WHERE origin = ?", (origin,))

    def kernels(self) -> list[IndexedKernel]:
        try:
            rows = self._conn.execute("SELECT key, record FROM kernels ORDER BY key").fetchall()
            return [record_from_json(IndexedKernel, json.loads(record)) for _, record in rows]
        except sqlite3.DatabaseError as exc:
            raise self._damaged(exc) from None
        except (ValueError, TypeError, KeyError) as exc:
            raise self._damaged(f"a record does not read back ({exc})") from None

    def origins(self) -> dict[str, int]:
        return dict(self._conn.execute("SELECT origin, COUNT(*) FROM kernels GROUP BY origin").fetchall())
