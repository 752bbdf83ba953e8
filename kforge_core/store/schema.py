"""The run store's tables. One database per runs directory (``RUNS_DIR/kforge.db``) holds every run there, and
every bench (a suite of problems, ``kforge bench``)."""

from __future__ import annotations

import sqlite3

from ..errors import KForgeError

VERSION = 1

TABLES = """
CREATE TABLE IF NOT EXISTS runs (
    id              TEXT PRIMARY KEY,
    created_at      REAL NOT NULL,
    updated_at      REAL NOT NULL,
    status          TEXT NOT NULL,              -- running | finished | failed
    stop_reason     TEXT NOT NULL DEFAULT '',
    problem_name    TEXT NOT NULL,
    problem_path    TEXT NOT NULL,
    problem_digest  TEXT NOT NULL,
    backend         TEXT NOT NULL,
    model           TEXT NOT NULL,
    analyst_model   TEXT NOT NULL,
    config_json     TEXT NOT NULL,              -- the settings and inputs the run was started with
    pid             INTEGER,
    host            TEXT,
    best_label      TEXT,
    best_runtime_ms REAL,
    best_speedup    REAL,                       -- against the faster baseline
    precision       TEXT NOT NULL DEFAULT 'fp32' -- the precision contract its speedups were measured under
);
CREATE TABLE IF NOT EXISTS steps (
    run_id        TEXT NOT NULL REFERENCES runs(id),
    seq           INTEGER NOT NULL,
    kind          TEXT NOT NULL,                -- lowering | baselines | generation | evaluation | profile | analysis
    key           TEXT NOT NULL,                -- what a resumed run must match to reuse the step
    pass_kind     TEXT NOT NULL,                -- setup | functional | optimization
    round         INTEGER NOT NULL,
    attempt       INTEGER NOT NULL,
    label         TEXT NOT NULL,
    elapsed_s     REAL NOT NULL,                -- run time when the step finished, across resumes
    created_at    REAL NOT NULL,
    artifact_dir  TEXT NOT NULL,                -- relative to the run directory
    data_json     TEXT NOT NULL,
    PRIMARY KEY (run_id, seq)
);
CREATE TABLE IF NOT EXISTS llm_calls (
    run_id         TEXT NOT NULL REFERENCES runs(id),
    seq            INTEGER NOT NULL,            -- the step that made the call
    agent          TEXT NOT NULL,
    model          TEXT NOT NULL,
    input_tokens   INTEGER NOT NULL,
    output_tokens  INTEGER NOT NULL,
    usage_reported INTEGER NOT NULL,
    cost_usd       REAL,                        -- NULL when the model has no price in [llm] prices
    requests       INTEGER NOT NULL,            -- 1 plus retries
    seconds        REAL NOT NULL,
    PRIMARY KEY (run_id, seq)
);
CREATE TABLE IF NOT EXISTS benches (
    id              TEXT PRIMARY KEY,
    created_at      REAL NOT NULL,
    updated_at      REAL NOT NULL,
    status          TEXT NOT NULL,              -- running | finished | failed | interrupted
    stop_reason     TEXT NOT NULL DEFAULT '',
    suite_path      TEXT NOT NULL,
    backend         TEXT NOT NULL,
    source          TEXT NOT NULL,              -- what is evaluated: solutions:DIR, or the agent loop's model
    config_json     TEXT NOT NULL,              -- the plan the bench was started with
    pid             INTEGER,
    host            TEXT
);
CREATE TABLE IF NOT EXISTS bench_problems (
    bench_id        TEXT NOT NULL REFERENCES benches(id),
    key             TEXT NOT NULL,              -- the problem's path in the suite, without .py
    status          TEXT NOT NULL,              -- running (an agent loop's run has started) | done
    run_id          TEXT,                       -- that run, in the runs table
    result_json     TEXT,                       -- the problem's result once done
    updated_at      REAL NOT NULL,
    PRIMARY KEY (bench_id, key)
);
"""


def connect(path: str) -> sqlite3.Connection:
    """Open (and create) the database. WAL lets ``kforge runs`` read while a run writes; a commit survives the
    writer being killed."""
    conn = sqlite3.connect(path, timeout=30.0)
    conn.row_factory = sqlite3.Row
    conn.execute("PRAGMA journal_mode=WAL")
    conn.execute("PRAGMA synchronous=NORMAL")
    conn.execute("PRAGMA foreign_keys=ON")
    version = conn.execute("PRAGMA user_version").fetchone()[0]
    if version > VERSION:
        conn.close()
        raise KForgeError(f"{path} was written by a newer KForge (schema {version} > {VERSION})")
    with conn:
        conn.executescript(TABLES)
        _add_missing_columns(conn)
        conn.execute(f"PRAGMA user_version={VERSION}")
    return conn


# Columns added since a table was first created, with their definition; a database that lacks one gets it, with its
# default for the rows already there (a run stored before contracts were recorded was held to fp32, the default).
_ADDED_COLUMNS = {"runs": {"precision": "TEXT NOT NULL DEFAULT 'fp32'"}}


def _add_missing_columns(conn: sqlite3.Connection) -> None:
    for table, columns in _ADDED_COLUMNS.items():
        present = {row["name"] for row in conn.execute(f"PRAGMA table_info({table})")}
        for name, definition in columns.items():
            if name not in present:
                conn.execute(f"ALTER TABLE {table} ADD COLUMN {name} {definition}")
