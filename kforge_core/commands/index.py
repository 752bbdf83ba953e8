"""``kforge index``: rebuild the kernel index from the run store, and add folders of published solutions."""

from __future__ import annotations

from pathlib import Path

import click

from ..app import App
from ..errors import KForgeError
from ..retrieval import KernelIndexStore, add_folder, rebuild_runs
from ..store import RunStore
from ..plural import counted


@click.command("index")
@click.option("--runs-dir", type=click.Path(file_okay=False, path_type=Path), help="Where runs are kept.")
@click.option("--extra", "extras", multiple=True, type=click.Path(file_okay=False, path_type=Path), metavar="DIR",
              help="A folder of solutions laid out like the problems under --problems (KernelBench's "
                   "level1/19_ReLU.py); repeatable. Read again each time it is named; kept until then.")
@click.option("--extra-backend", metavar="NAME", help="The backend the --extra solutions are written for.")
@click.option("--problems", "problems_dir", type=click.Path(file_okay=False, path_type=Path), metavar="DIR",
              help="The problems the --extra solutions solve (a KernelBench checkout's KernelBench/ folder).")
@click.pass_obj
def index(app: App, runs_dir: Path | None, extras: tuple[Path, ...], extra_backend: str | None,
          problems_dir: Path | None) -> None:
    """Rebuild the kernel index (RUNS_DIR/retrieval.db) from the best kernel of every run, and add --extra
    folders of solutions. Runs add their best kernel themselves as they finish; this catches up and repairs."""
    if extras and (extra_backend is None or problems_dir is None):
        raise KForgeError("--extra needs --extra-backend NAME and --problems DIR: which backend the solutions are "
                          "for, and where the problems they solve are")
    settings = app.settings(runs_dir=runs_dir)
    with RunStore(settings.runs_dir) as store:
        gathered = rebuild_runs(store)
    click.echo(f"runs: {counted(len(gathered.kernels), 'kernel')} indexed")
    for why in gathered.skipped:
        click.echo(f"  skipped {why}")
    for folder in extras:
        assert extra_backend is not None and problems_dir is not None
        from_folder = add_folder(settings.runs_dir, folder, extra_backend, problems_dir)
        click.echo(f"{folder}: {counted(len(from_folder.kernels), extra_backend + ' kernel')} indexed, "
                   f"{counted(len(from_folder.skipped), 'file')} without a problem")
    with KernelIndexStore(settings.runs_dir) as kernels:
        total = len(kernels.kernels())
    click.echo(f"the index {kernels.path} holds {counted(total, 'kernel')}")
