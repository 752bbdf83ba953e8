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


def test_a_table_too_wide_for_the_terminal_keeps_every_column_in_a_plain_layout():
    columns = (Column("run"), Column("problem", fold=True), Column("model", fold=True, optional=True),
               Column("precision", optional=True), Column("speedup"))
    rows = [["20261125-140841-fecf", "level1/19_ReLU_with_a_long_name", "openai-like:qwen2.5-coder-32b-instruct",
             "fp32", "1.84x"]]
    wide = _render(fitted_table(columns, rows, 200), 200)
    assert all(header in wide[1] for header in ("run", "problem", "model", "precision", "speedup"))
    narrow = _render(fitted_table(columns, rows, 70), 70)
    assert narrow == ["run        20261125-140841-fecf", "problem    level1/19_ReLU_with_a_long_name",
                      "speedup    1.84x", "model      openai-like:qwen2.5-coder-32b-instruct", "precision  fp32"]


def test_a_folding_column_wraps_at_spaces_and_never_splits_a_word():
    columns = (Column("run"), Column("problem", fold=True), Column("note", fold=True))
    rows = [["20261125-140841-fecf", "elementwise_gelu_scale", "a note long enough to be folded onto several lines"]]
    for width in (50, 70, 90):
        lines = _render(fitted_table(columns, rows, width), width)
        assert any("elementwise_gelu_scale" in line for line in lines), lines  # whole, on one line
        assert "several" in " ".join(line.strip("│┃ ") for line in lines).split()
        assert all(len(line) <= width for line in lines)


def test_table_cells_are_text_not_markup():
    lines = _render(fitted_table((Column("hint"),), [["pip install 'kforge-cute[dsl]' [bold]x[/bold]"]], 80), 80)
    assert "pip install 'kforge-cute[dsl]' [bold]x[/bold]" in "\n".join(lines)


@pytest.mark.skipif(importlib.util.find_spec("cutlass") is not None, reason="the CuTe DSL is installed here")
def test_backends_shows_the_cute_install_hint_with_its_extra():
    result = CliRunner().invoke(cli, ["backends"], obj=App(), env={"COLUMNS": "200"})
    assert result.exit_code == 0, result.output
    assert "pip install 'kforge-cute[dsl]'" in result.output


def test_backends_at_80_columns_keeps_every_column():
    app = App()
    result = CliRunner().invoke(cli, ["backends"], obj=app, env=NARROW)
    assert result.exit_code == 0, result.output
    assert all(len(line) <= 80 for line in result.output.splitlines())
    for entry in app.registry.all():
        block = result.output.split(f"backend            {entry.name}\n", 1)[1].split("\n\n", 1)[0]
        assert f"programming model  {entry.backend.programming_model}" in block, block
        assert f"device             {entry.backend.device}" in block and "available" in block


def test_runs_at_80_columns_keeps_every_column_and_whole_names(tmp_path):
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
    for shown in ("run        20261125-140841-fecf", "problem    elementwise_gelu_scale", "precision  fp32",
                  "model      openai-like:qwen2.5-coder-32b-instruct", "speedup    1.84x", "best       o1.1"):
        assert shown in lines, result.output


def test_lines_longer_than_the_terminal_are_not_broken_when_piped(monkeypatch, capsys):
    from kforge_core.loop.progress import RichProgress

    monkeypatch.setenv("COLUMNS", "80")
    line = "functional f3: numerical_mismatch: trial seed 42: " + "8,006,366 of 8,388,608 elements outside " * 3
    RichProgress().event(line)
    assert capsys.readouterr().out == line + "\n"
