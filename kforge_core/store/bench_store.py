"""Benches in the run store: one row per bench, and one per problem of it, committed as each problem finishes, so
that ``kforge bench --resume`` continues a killed suite without redoing finished problems.

A bench has its own connection to the runs directory's database (SQLite in WAL mode takes writers from several
threads and processes, one at a time), so each executor's slot may record what it starts.
"""

from __future__ import annotations

import json
import os
import socket
import sqlite3
import time
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from ..errors import KForgeError
from ..secrets import redact
from .run_store import RunStore, process_alive


@dataclass(frozen=True)
class BenchInfo:
    """One row of ``benches``; ``config`` is the plan it was started with; ``bench_dir`` is RUNS_DIR/ID."""

    id: str
    created_at: float
    updated_at: float
    status: str
    stop_reason: str
    suite_path: str
    backend: str
    source: str
    bench_dir: Path
    config: dict[str, Any]
    pid: int | None = None
    host: str | None = None

    @property
    def alive(self) -> bool:
        """True while the process that runs it is alive (checked on this host only)."""
        return self.status == "running" and process_alive(self.pid, self.host)


@dataclass(frozen=True)
class BenchProblemRow:
    key: str
    status: str  # "running" or "done"
    run_id: str | None
    result: dict[str, Any] | None
    updated_at: float


class BenchStore(RunStore):
    """The run store seen from a bench: its own connection, the benches' tables."""

    def __enter__(self) -> BenchStore:
        return self

    # --------------------------------------------------------------------------------------------- benches

    def create_bench(self, bench_id: str, *, suite_path: str, backend: str, source: str,
               config: dict[str, Any]) -> BenchInfo:
        now = time.time()
        with self._conn:
            self._conn.execute(
                "INSERT INTO benches (id, created_at, updated_at, status, suite_path, backend, source, config_json,"
                " pid, host) VALUES (?, ?, ?, 'running', ?, ?, ?, ?, ?, ?)",
                (bench_id, now, now, suite_path, backend, source, self._json(config), os.getpid(),
                 socket.gethostname()),
            )
        return self.get_bench(bench_id)

    def get_bench(self, bench_id: str) -> BenchInfo:
        row = self._conn.execute("SELECT * FROM benches WHERE id = ?", (bench_id,)).fetchone()
        if row is None:
            raise KForgeError(f"no bench {bench_id!r} in {self.path}")
        return _bench_info(row, self.runs_dir)

    def list_benches(self) -> list[BenchInfo]:
        return [_bench_info(r, self.runs_dir) for r in self._conn.execute("SELECT * FROM benches ORDER BY created_at")]

    def claim_bench(self, bench_id: str) -> None:
        """Mark the bench as running in this process (a resume)."""
        with self._conn:
            self._conn.execute(
                "UPDATE benches SET status = 'running', stop_reason = '', pid = ?, host = ?, updated_at = ?"
                " WHERE id = ?", (os.getpid(), socket.gethostname(), time.time(), bench_id))

    def finish_bench(self, bench_id: str, status: str, stop_reason: str = "") -> None:
        with self._conn:
            self._conn.execute(
                "UPDATE benches SET status = ?, stop_reason = ?, pid = NULL, updated_at = ? WHERE id = ?",
                (status, redact(stop_reason, self._secrets), time.time(), bench_id))

    # -------------------------------------------------------------------------------------------- problems

    def problem_started(self, bench_id: str, key: str, run_id: str) -> None:
        """An agent loop's run for ``key`` has started (a resumed bench continues it)."""
        with self._conn:
            self._conn.execute(
                "INSERT INTO bench_problems (bench_id, key, status, run_id, updated_at) VALUES (?, ?, 'running', ?, ?)"
                " ON CONFLICT (bench_id, key) DO UPDATE SET status = 'running', run_id = excluded.run_id,"
                " updated_at = excluded.updated_at", (bench_id, key, run_id, time.time()))

    def problem_done(self, bench_id: str, key: str, result: dict[str, Any], run_id: str | None = None) -> None:
        """Commit ``key``'s result: a resumed bench does not evaluate it again."""
        with self._conn:
            self._conn.execute(
                "INSERT INTO bench_problems (bench_id, key, status, run_id, result_json, updated_at)"
                " VALUES (?, ?, 'done', ?, ?, ?) ON CONFLICT (bench_id, key) DO UPDATE SET status = 'done',"
                " run_id = excluded.run_id, result_json = excluded.result_json, updated_at = excluded.updated_at",
                (bench_id, key, run_id, self._json(result), time.time()))
            self._conn.execute("UPDATE benches SET updated_at = ? WHERE id = ?", (time.time(), bench_id))

    def problems(self, bench_id: str) -> dict[str, BenchProblemRow]:
        return {row["key"]: BenchProblemRow(
            row["key"], row["status"], row["run_id"],
            json.loads(row["result_json"]) if row["result_json"] else None, row["updated_at"])
            for row in self._conn.execute("SELECT * FROM bench_problems WHERE bench_id = ?", (bench_id,))}


def _bench_info(row: sqlite3.Row, runs_dir: Path) -> BenchInfo:
    return BenchInfo(
        id=row["id"], created_at=row["created_at"], updated_at=row["updated_at"], status=row["status"],
        stop_reason=row["stop_reason"], suite_path=row["suite_path"], backend=row["backend"], source=row["source"],
        bench_dir=runs_dir / row["id"], config=json.loads(row["config_json"]), pid=row["pid"], host=row["host"],
    )
