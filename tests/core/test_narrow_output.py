"""What KForge prints stays readable at 80 columns (a common terminal, and the width of piped output), and user
strings keep their brackets instead of being read as markup."""

from __future__ import annotations

import importlib.util

import pytest
from click.testing import CliRunner
from rich.console import Console

from kforge_core.app import App
from kforge_core.cli import cli
from kforge_core.report.tables import Column, fitted_table
from kforge_core.store import RunStore

NARROW = {"COLUMNS": "80", "LINES": "50"}


def _render(table, width: int) -> list[str]:
    console = Console(width=width, record=True, file=open("/dev/null", "w"))
    console.print(table)
    return console.export_text().splitlines()


def test_a_narrow_table_drops_the_optional_columns_last_named_first_and_keeps_the_identifying_ones():
    columns = (Column("run"), Column("problem", fold=True), Column("model", fold=True, optional=True),
               Column("precision", optional=True), Column("speedup"))
    rows = [["20261125-140841-fecf", "level1/19_ReLU_with_a_long_name", "openai-like:qwen2.5-coder-32b-instruct",
             "fp32", "1.84x"]]
    wide = _render(fitted_table(columns, rows, 200), 200)
    assert all(header in wide[1] for header in ("run", "problem", "model", "precision", "speedup"))
    narrow = _render(fitted_table(columns, rows, 70), 70)
    assert all(len(line) <= 70 for line in narrow)
    assert "model" in narrow[1] and "precision" not in narrow[1]  # precision was named last: it went first
    assert "20261125-140841-fecf" in "\n".join(narrow) and "level1/19" in "\n".join(narrow)


def test_table_cells_are_text_not_markup():
    lines = _render(fitted_table((Column("hint"),), [["pip install 'kforge-cute[dsl]' [bold]x[/bold]"]], 80), 80)
    assert "pip install 'kforge-cute[dsl]' [bold]x[/bold]" in "\n".join(lines)


@pytest.mark.skipif(importlib.util.find_spec("cutlass") is not None, reason="the CuTe DSL is installed here")
def test_backends_shows_the_cute_install_hint_with_its_extra():
    result = CliRunner().invoke(cli, ["backends"], obj=App(), env={"COLUMNS": "200"})
    assert result.exit_code == 0, result.output
    assert "pip install 'kforge-cute[dsl]'" in result.output


def test_backends_at_80_columns_keeps_every_name_and_availability():
    app = App()
    result = CliRunner().invoke(cli, ["backends"], obj=app, env=NARROW)
    assert result.exit_code == 0, result.output
    assert all(len(line) <= 80 for line in result.output.splitlines())
    assert "backend" in result.output and "available" in result.output
    for entry in app.registry.all():
        assert f"│ {entry.name} " in result.output


def test_runs_at_80_columns_shows_the_problem_and_its_header(tmp_path):
    with RunStore(tmp_path) as store:
        store.create_run("20261125-140841-fecf", problem_name="elementwise_gelu_scale", problem_path="/p.py",
                         problem_digest="d", backend="cpu", model="openai-like:qwen2.5-coder-32b-instruct",
                         analyst_model="openai-like:qwen2.5-coder-32b-instruct", config={}, precision="fp32")
        store.set_best("20261125-140841-fecf", "o1.1", 57.9, 1.84)
        store.finish("20261125-140841-fecf", "finished", "done")
    result = CliRunner().invoke(cli, ["runs", "--runs-dir", str(tmp_path)], obj=App(load_plugins=False), env=NARROW)
    assert result.exit_code == 0, result.output
    title, *lines = result.output.splitlines()
    assert title == f"KForge runs in {tmp_path}"  # whole, however long: a path is copied from here
    assert all(len(line) <= 80 for line in lines)
    header = next(line for line in lines if "run" in line and "status" in line)
    assert "problem" in header and "best" in header and "speedup" in header
    assert "elementwise_gel" in result.output and "1.84x" in result.output


def test_lines_longer_than_the_terminal_are_not_broken_when_piped(monkeypatch, capsys):
    from kforge_core.loop.progress import RichProgress

    monkeypatch.setenv("COLUMNS", "80")
    line = "functional f3: numerical_mismatch: trial seed 42: " + "8,006,366 of 8,388,608 elements outside " * 3
    RichProgress().event(line)
    assert capsys.readouterr().out == line + "\n"
