"""Every way the run store can be unusable is one clear ``Error:`` line that names the file, in every command that
opens it, never a traceback; a store damaged or deleted while KForge used it is found at the end."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import pytest
from click.testing import CliRunner

from kforge_core.app import App
from kforge_core.cli import cli
from kforge_core.errors import KForgeError
from kforge_core.store import RunStore


def kforge(*args: str):
    return CliRunner().invoke(cli, list(args), obj=App(load_plugins=False), catch_exceptions=False)


def _refused(runs: Path, fragment: str) -> None:
    for command in (["runs"], ["show", "some-run"]):
        result = kforge(*command, "--runs-dir", str(runs))
        assert result.exit_code != 0
        assert result.output.startswith("Error: ") and fragment in result.output, result.output
        assert "Traceback" not in result.output


def test_a_runs_directory_that_is_a_file(tmp_path, monkeypatch):
    runs = tmp_path / "runs"
    runs.write_text("not a directory")
    monkeypatch.setenv("KFORGE_RUNS_DIR", str(runs))
    result = kforge("runs")
    assert result.exit_code != 0 and f"Error: the runs directory {runs} is a file" in result.output


def test_an_empty_store_is_not_taken_for_a_new_one(tmp_path):
    (tmp_path / "kforge.db").write_bytes(b"")
    _refused(tmp_path, f"the run store {tmp_path / 'kforge.db'} is empty (0 bytes)")


def test_a_new_store_is_never_seen_empty_by_a_reader_beside_it(tmp_path):
    """SQLite creates its file at open and writes the header later: a reader that looked in between (``kforge runs``
    beside a starting run) took the new store for a truncated one. A watcher process records the size it first sees."""
    stores = [tmp_path / str(i) for i in range(30)]
    watcher = subprocess.Popen([sys.executable, "-c", WATCHER, *map(str, stores)], stdout=subprocess.PIPE, text=True)
    assert watcher.stdout.readline() == "watching\n"
    for runs in stores:
        RunStore(runs).close()
    first_sizes = [int(size) for size in watcher.communicate(timeout=60)[0].split()]
    assert len(first_sizes) == len(stores) and 0 not in first_sizes, first_sizes
    assert sorted(p.name for p in stores[0].iterdir()) == ["kforge.db"]  # no staging file left


WATCHER = """
import os, sys
print("watching", flush=True)
for runs in sys.argv[1:]:
    path = os.path.join(runs, "kforge.db")
    while True:
        try:
            print(os.stat(path).st_size, flush=True)
            break
        except FileNotFoundError:
            pass
"""


def test_a_store_that_is_a_directory(tmp_path):
    (tmp_path / "kforge.db").mkdir()
    _refused(tmp_path, f"the run store {tmp_path / 'kforge.db'} is a directory")


def test_a_damaged_store(tmp_path):
    RunStore(tmp_path).close()
    with open(tmp_path / "kforge.db", "r+b") as handle:
        handle.write(bytes(4096))
    _refused(tmp_path, f"the run store {tmp_path / 'kforge.db'} is damaged")


@pytest.mark.skipif(os.geteuid() == 0, reason="root writes into a read-only directory")
def test_a_read_only_runs_directory(tmp_path):
    runs = tmp_path / "runs"
    runs.mkdir()
    runs.chmod(0o555)
    try:
        _refused(runs, "is not writable")
    finally:
        runs.chmod(0o755)


@pytest.mark.parametrize("damage", ["zero", "delete", "replace"])
def test_damage_while_in_use_is_found_by_the_integrity_check(tmp_path, damage):
    with RunStore(tmp_path) as store:
        store.check_integrity()
        database = tmp_path / "kforge.db"
        if damage == "zero":
            with open(database, "r+b") as handle:
                handle.write(bytes(4096))
        elif damage == "delete":
            database.unlink()
        else:
            database.rename(tmp_path / "old.db")
            database.write_bytes((tmp_path / "old.db").read_bytes())
        with pytest.raises(KForgeError, match=str(database)):
            store.check_integrity()


def test_a_second_resume_of_a_running_run_is_refused_naming_its_process(tmp_path):
    from kforge_core.loop.session import resume_run
    from kforge_core.store.locks import held

    with RunStore(tmp_path) as store:
        store.create_run("r1", problem_name="p", problem_path="/p.py", problem_digest="d", backend="cpu",
                         model="openai:gpt-4.1", analyst_model="openai:gpt-4.1", config={}, precision="fp32")
        store.finish("r1", "failed", "killed")
        with held(tmp_path, "run", "r1"):  # as `kforge run --resume r1` holds it while it runs
            with pytest.raises(KForgeError, match=f"run r1 is being run by process {os.getpid()}"):
                resume_run(App(load_plugins=False), store, "r1", progress=None)
