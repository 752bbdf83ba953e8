"""``kforge backends``: what backends are installed, who provides them, and whether they run here."""

from __future__ import annotations

import json

import click
from rich.console import Console
from rich.markup import escape
from rich.text import Text

from ..app import App
from ..report.tables import Column, fitted_table

# the name and whether it runs here matter most; at 80 columns the programming model and then the device go
_COLUMNS = (Column("backend"), Column("provided by"), Column("programming model", fold=True), Column("device"),
            Column("available", fold=True, min_width=36))


@click.command()
@click.argument("names", nargs=-1, metavar="[NAME]...")
@click.option("--json", "as_json", is_flag=True, help="Print a JSON list instead of a table.")
@click.pass_obj
def backends(app: App, names: tuple[str, ...], as_json: bool) -> None:
    """List the registered backends (or only NAME...) and whether each is available on this machine."""
    settings = app.settings()
    entries = [app.backend(name) for name in names] if names else app.registry.all()
    rows = []
    for entry in entries:
        availability = app.registry.availability(entry.name, settings.backend_options(entry.backend))
        rows.append(
            {
                "name": entry.name,
                "plugin": entry.plugin,
                "distribution": entry.distribution,
                "version": entry.version,
                "programming_model": entry.backend.programming_model,
                "device": entry.backend.device,
                "available": availability.available,
                "reason": availability.reason,
                "detail": availability.detail,
            }
        )
    if as_json:
        click.echo(json.dumps(rows, indent=2))
        return
    cells = [[row["name"], f"{row['distribution']} {row['version']}", row["programming_model"], row["device"],
              Text.assemble(("yes", "green"), f" {row['detail']}") if row["available"]
              else Text.assemble(("no", "red"), f": {row['reason']}")] for row in rows]
    console = Console(soft_wrap=True)
    console.print(fitted_table(_COLUMNS, cells, console.width, title="KForge backends"))
    for failure in app.plugins.failures:
        console.print(f"[yellow]plugin {escape(repr(failure.name))} ({escape(str(failure.distribution))}) failed to "
                      f"load:[/] {escape(str(failure.error))}")
