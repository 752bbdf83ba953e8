"""``kforge show RUN_ID``: one run, attempt by attempt."""

from __future__ import annotations

import json
from pathlib import Path

import click
from rich.console import Console

from ..app import App
from ..report import RunReport
from ..report.console import print_run, report_json
from ..store import RunStore


@click.command()
@click.argument("run_id")
@click.option("--runs-dir", type=click.Path(file_okay=False, path_type=Path), help="Where runs are kept.")
@click.option("--json", "as_json", is_flag=True, help="Print the run as JSON.")
@click.pass_obj
def show(app: App, run_id: str, runs_dir: Path | None, as_json: bool) -> None:
    """Print run RUN_ID: its attempts and verdicts, the analyst's recommendations, usage, and its files."""
    settings = app.settings(runs_dir=runs_dir)
    with RunStore(settings.runs_dir) as store:
        report = RunReport.from_store(store, run_id)
    if as_json:
        click.echo(json.dumps(report_json(report), indent=2))
        return
    print_run(report, Console(highlight=False, soft_wrap=True))
