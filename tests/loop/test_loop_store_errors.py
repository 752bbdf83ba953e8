"""Every way the run store can be unusable is one clear ``Error:`` line that names the file, in every command that
opens it, never a traceback; a store damaged or deleted while KForge used it is found at the end."""

from __future__ import annotations

import os
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
