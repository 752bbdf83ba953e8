"""``kforge runs``: the runs kept in a runs directory."""

from __future__ import annotations

import datetime as dt
import json
from pathlib import Path

import click
from rich.console import Console
from rich.text import Text

from ..app import App
from ..precision_contract import mixed_contracts_note
from ..report.tables import Column, fitted_table
from ..store import RunStore


@click.command()
@click.option("--runs-dir", type=click.Path(file_okay=False, path_type=Path), help="Where runs are kept.")
@click.option("--json", "as_json", is_flag=True, help="Print a JSON list.")
@click.pass_obj
def runs(app: App, runs_dir: Path | None, as_json: bool) -> None:
    """List the runs, oldest first (a run's id is its start time): status, problem, backend, precision contract,
    model, best speedup."""
    settings = app.settings(runs_dir=runs_dir)
    with RunStore(settings.runs_dir) as store:
        infos = store.list_runs()
    rows = [{
        "id": r.id, "status": r.display_status, "stop_reason": r.stop_reason, "problem": r.problem_name,
        "backend": r.backend, "precision": r.precision, "model": r.model, "best": r.best_label,
        "best_runtime_ms": r.best_runtime_ms, "best_speedup": r.best_speedup,
        "started": dt.datetime.fromtimestamp(r.created_at).isoformat(timespec="seconds"),
    } for r in infos]
    if as_json:
        click.echo(json.dumps(rows, indent=2))
        return
    console = Console(soft_wrap=True)
    cells = [[row["id"], row["status"], row["problem"], row["backend"], row["precision"], _short(row["model"]),
              row["best"] or "-", f"{row['best_speedup']:.2f}x" if row["best_speedup"] is not None else "-"]
             for row in rows]
    console.print(Text(f"KForge runs in {settings.runs_dir}"))  # a path stays whole, to be copied
    console.print(fitted_table(_COLUMNS, cells, console.width))
    note = mixed_contracts_note(r.precision for r in infos if r.best_speedup is not None)
    if note:
        console.print(f"[yellow]Note:[/] {note}.")


# what tells runs apart stays; at 80 columns the model, then the precision contract, then the backend go
_COLUMNS = (Column("run"), Column("status"), Column("problem", fold=True), Column("backend", optional=True),
            Column("precision", optional=True), Column("model", fold=True, optional=True), Column("best"),
            Column("speedup"))


def _short(model: str) -> str:
    """A replay script by its file name; other specs as they are."""
    provider, _, name = model.partition(":")
    return f"replay:{Path(name).name}" if provider == "replay" else model
