"""``kforge backends``: what backends are installed, who provides them, and whether they run here."""

from __future__ import annotations

import json

import click
from rich.console import Console
from rich.table import Table

from ..app import App


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
    table = Table(title="KForge backends")
    for column in ("backend", "provided by", "programming model", "device", "available"):
        table.add_column(column)
    for row in rows:
        status = f"[green]yes[/] {row['detail']}" if row["available"] else f"[red]no[/]: {row['reason']}"
        table.add_row(
            row["name"], f"{row['distribution']} {row['version']}", row["programming_model"], row["device"], status
        )
    console = Console()
    console.print(table)
    for failure in app.plugins.failures:
        console.print(f"[yellow]plugin {failure.name!r} ({failure.distribution}) failed to load:[/] {failure.error}")
