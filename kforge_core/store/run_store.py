"""The run store: every run and each of its steps in SQLite, each step committed before the next one begins."""

from __future__ import annotations

import json
import os
import socket
import sqlite3
import time
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from ..errors import KForgeError
from ..secrets import redact, secret_values
from .guarded import GuardedConnection
from .integrity import check_store, open_store

DB_NAME = "kforge.db"


@dataclass(frozen=True)
class RunInfo:
    """One row of ``runs``; ``config`` is the JSON the run was started with; ``run_dir`` is RUNS_DIR/ID."""

    id: str
    created_at: float
    updated_at: float
    status: str
    stop_reason: str
    problem_name: str
    problem_path: str
    problem_digest: str
    backend: str
    model: str
    analyst_model: str
    run_dir: Path
    config: dict[str, Any]
    pid: int | None = None
    host: str | None = None
    best_label: str | None = None
    best_runtime_ms: float | None = None
    best_speedup: float | None = None
    precision: str = "fp32"  # the precision contract the run's candidates were held to

    @property
    def alive(self) -> bool:
        """True while the process that runs it is alive (checked on this host only)."""
        return self.status == "running" and process_alive(self.pid, self.host)

    @property
    def display_status(self) -> str:
        """``running`` only while its process lives; a run whose process died says ``interrupted``."""
        if self.status == "running" and not self.alive:
            return "interrupted"
        return self.status


def process_alive(pid: int | None, host: str | None) -> bool:
    """True when process ``pid`` of ``host`` is alive (only this host's processes can be checked)."""
    if pid is None or host != socket.gethostname():
        return False
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    except PermissionError:
        return True
    return True


@dataclass(frozen=True)
class LLMCall:
    """Usage and cost of one LLM call (one row of ``llm_calls``)."""

    agent: str
    model: str
    input_tokens: int
    output_tokens: int
    usage_reported: bool
    cost_usd: float | None
    requests: int
    seconds: float


@dataclass(frozen=True)
class StepRecord:
    """One persisted step. ``data`` is the step's content (JSON); ``artifact_dir`` is relative to the run dir."""

    seq: int
    kind: str
    key: str
    pass_kind: str
    round: int
    attempt: int
    label: str
    elapsed_s: float
    artifact_dir: str
    data: dict[str, Any] = field(default_factory=dict)
    created_at: float = 0.0
    llm_call: LLMCall | None = None


class RunStore:
    """The database of one runs directory. Text is redacted of secrets before it is written."""

    def __init__(self, runs_dir: Path) -> None:
        self.runs_dir = Path(runs_dir)
        self.path = self.runs_dir / DB_NAME
        self._secrets = secret_values()
        self._conn = GuardedConnection(open_store(self.runs_dir, self.path), self.path)
        self._inode = self.path.stat().st_ino

    def close(self) -> None:
        self._conn.close()

    def check_integrity(self) -> None:
        """A KForgeError unless the database file is still the one opened, and whole (``PRAGMA quick_check`` in a
        connection of its own, which reads the file as it is on disk now)."""
        check_store(self.path, self._inode)

    def __enter__(self) -> RunStore:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()

    def _json(self, value: Any) -> str:
        return redact(json.dumps(value), self._secrets)  # key order kept: the order things happened in

    # ----------------------------------------------------------------------------------------------- runs

    def create_run(
        self, run_id: str, *, problem_name: str, problem_path: str, problem_digest: str, backend: str,
        model: str, analyst_model: str, config: dict[str, Any], precision: str,
    ) -> RunInfo:
        now = time.time()
        with self._conn:
            self._conn.execute(
                "INSERT INTO runs (id, created_at, updated_at, status, problem_name, problem_path, problem_digest,"
                " backend, model, analyst_model, config_json, pid, host, precision)"
                " VALUES (?, ?, ?, 'running', ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)",
                (run_id, now, now, problem_name, problem_path, problem_digest, backend, model, analyst_model,
                 self._json(config), os.getpid(), socket.gethostname(), precision),
            )
        return self.get_run(run_id)

    def get_run(self, run_id: str) -> RunInfo:
        row = self._conn.execute("SELECT * FROM runs WHERE id = ?", (run_id,)).fetchone()
        if row is None:
            raise KForgeError(f"no run {run_id!r} in {self.path}", hint="`kforge runs` lists the runs there")
        return _run_info(row, self.runs_dir)

    def list_runs(self) -> list[RunInfo]:
        return [_run_info(row, self.runs_dir) for row in self._conn.execute("SELECT * FROM runs ORDER BY created_at")]

    def claim(self, run_id: str) -> None:
        """Mark the run as running in this process (a resume)."""
        with self._conn:
            self._conn.execute(
                "UPDATE runs SET status = 'running', stop_reason = '', pid = ?, host = ?, updated_at = ? WHERE id = ?",
                (os.getpid(), socket.gethostname(), time.time(), run_id),
            )

    def set_best(self, run_id: str, label: str, runtime_ms: float, speedup: float | None) -> None:
        with self._conn:
            self._conn.execute(
                "UPDATE runs SET best_label = ?, best_runtime_ms = ?, best_speedup = ?, updated_at = ? WHERE id = ?",
                (label, runtime_ms, speedup, time.time(), run_id),
            )

    def finish(self, run_id: str, status: str, stop_reason: str) -> None:
        with self._conn:
            self._conn.execute(
                "UPDATE runs SET status = ?, stop_reason = ?, pid = NULL, updated_at = ? WHERE id = ?",
                (status, redact(stop_reason, self._secrets), time.time(), run_id),
            )

    # ---------------------------------------------------------------------------------------------- steps

    def add_step(self, run_id: str, step: StepRecord) -> None:
        """Commit ``step`` (and its LLM call) in one transaction."""
        with self._conn:
            self._conn.execute(
                "INSERT INTO steps (run_id, seq, kind, key, pass_kind, round, attempt, label, elapsed_s, created_at,"
                " artifact_dir, data_json) VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)",
                (run_id, step.seq, step.kind, step.key, step.pass_kind, step.round, step.attempt, step.label,
                 step.elapsed_s, time.time(), step.artifact_dir, self._json(step.data)),
            )
            call = step.llm_call
            if call is not None:
                self._conn.execute(
                    "INSERT INTO llm_calls (run_id, seq, agent, model, input_tokens, output_tokens, usage_reported,"
                    " cost_usd, requests, seconds) VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?)",
                    (run_id, step.seq, call.agent, call.model, call.input_tokens, call.output_tokens,
                     int(call.usage_reported), call.cost_usd, call.requests, call.seconds),
                )
            self._conn.execute("UPDATE runs SET updated_at = ? WHERE id = ?", (time.time(), run_id))

    def steps(self, run_id: str) -> list[StepRecord]:
        calls = {row["seq"]: _llm_call(row) for row in self._conn.execute(
            "SELECT * FROM llm_calls WHERE run_id = ?", (run_id,))}
        return [_step(row, calls.get(row["seq"])) for row in self._conn.execute(
            "SELECT * FROM steps WHERE run_id = ? ORDER BY seq", (run_id,))]

    def llm_calls(self, run_id: str) -> list[LLMCall]:
        return [_llm_call(row) for row in self._conn.execute(
            "SELECT * FROM llm_calls WHERE run_id = ? ORDER BY seq", (run_id,))]

    def replies_received(self, run_id: str) -> dict[str, int]:
        """Per model spec, how many replies the run has stored (a replay script resumes after them)."""
        rows = self._conn.execute("SELECT model, COUNT(*) FROM llm_calls WHERE run_id = ? GROUP BY model", (run_id,))
        return {model: count for model, count in rows}


def _run_info(row: sqlite3.Row, runs_dir: Path) -> RunInfo:
    return RunInfo(
        id=row["id"], created_at=row["created_at"], updated_at=row["updated_at"], status=row["status"],
        stop_reason=row["stop_reason"], problem_name=row["problem_name"], problem_path=row["problem_path"],
        problem_digest=row["problem_digest"], backend=row["backend"], model=row["model"],
        analyst_model=row["analyst_model"], run_dir=runs_dir / row["id"], config=json.loads(row["config_json"]),
        pid=row["pid"], host=row["host"], best_label=row["best_label"], best_runtime_ms=row["best_runtime_ms"],
        best_speedup=row["best_speedup"], precision=row["precision"],
    )


def _llm_call(row: sqlite3.Row) -> LLMCall:
    return LLMCall(
        agent=row["agent"], model=row["model"], input_tokens=row["input_tokens"], output_tokens=row["output_tokens"],
        usage_reported=bool(row["usage_reported"]), cost_usd=row["cost_usd"], requests=row["requests"],
        seconds=row["seconds"],
    )


def _step(row: sqlite3.Row, call: LLMCall | None) -> StepRecord:
    return StepRecord(
        seq=row["seq"], kind=row["kind"], key=row["key"], pass_kind=row["pass_kind"], round=row["round"],
        attempt=row["attempt"], label=row["label"], elapsed_s=row["elapsed_s"], artifact_dir=row["artifact_dir"],
        data=json.loads(row["data_json"]), created_at=row["created_at"], llm_call=call,
    )
