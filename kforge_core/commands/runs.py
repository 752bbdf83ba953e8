"""``kforge runs``: the runs kept in a runs directory."""

from __future__ import annotations

import datetime as dt
import json
from pathlib import Path

import click
from rich.console import Console
from rich.table import Table

from ..app import App
from ..precision_contract import mixed_contracts_note
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
    table = Table(title=f"KForge runs in {settings.runs_dir}")
    for column in ("run", "status", "problem", "backend", "precision", "model", "best", "speedup"):
        table.add_column(column, overflow="fold", no_wrap=column not in ("problem", "model"))
    for row in rows:
        speedup = f"{row['best_speedup']:.2f}x" if row["best_speedup"] is not None else "-"
        table.add_row(row["id"], row["status"], row["problem"], row["backend"], row["precision"],
                      _short(row["model"]), row["best"] or "-", speedup)
    console = Console()
    console.print(table)
    note = mixed_contracts_note(r.precision for r in infos if r.best_speedup is not None)
    if note:
        console.print(f"[yellow]Note:[/] {note}.")


def _short(model: str) -> str:
    """A replay script by its file name; other specs as they are."""
    provider, _, name = model.partition(":")
    return f"replay:{Path(name).name}" if provider == "replay" else model
