"""``kforge export RUN_OR_BENCH --out DIR``: the accepted kernels of a run or a bench as a ``kernels`` package."""

from __future__ import annotations

import importlib.util
import json
from pathlib import Path

import click

from ..app import App
from ..errors import KForgeError
from ..export import accepted_kernels, prepare, write_package
from ..export.package import describe_refusals
from ..plural import counted


@click.command("export")
@click.argument("reference", metavar="RUN_OR_BENCH")
@click.option("--out", required=True, type=click.Path(file_okay=False, path_type=Path),
              help="The package's directory (its build/ is replaced).")
@click.option("--name", help="The package's name (default: kforge-<problem>, or kforge-<suite> for a bench).")
@click.option("--runs-dir", type=click.Path(file_okay=False, path_type=Path), help="Where runs are kept.")
@click.option("--json", "as_json", is_flag=True, help="Print what was exported as JSON.")
@click.pass_obj
def export(app: App, reference: str, out: Path, name: str | None, runs_dir: Path | None, as_json: bool) -> None:
    """Write the accepted kernels of run or bench RUN_OR_BENCH (an id, or its directory) as a Hugging Face
    `kernels` package that kernels.get_local_kernel loads: one stateless layer per kernel, metadata.json with the
    verdict's figures and contract, and a card. Kernels the format cannot carry (Numba) are refused with the
    reason."""
    if importlib.util.find_spec("kernels") is None:
        raise KForgeError("kforge export needs the `kernels` package",
                          hint="pip install 'kforge-core[export]'")
    settings = app.settings(runs_dir=runs_dir)
    accepted = accepted_kernels(settings.runs_dir, reference)
    kernels, refused = prepare(accepted, lambda backend: app.backend(backend).backend.device)
    package = name or default_name(accepted[0].problem if len(accepted) == 1 else accepted[0].bench_id or "kernels")
    if not kernels and as_json:  # what was refused, as asked; the error says it once more, on stderr
        click.echo(json.dumps({"path": None, "package": package, "variant": None, "kernels": [],
                               "refused": [{"problem": r.problem, "reason": r.reason} for r in refused]}, indent=2))
    result = write_package(out, package, kernels, refused)
    if as_json:
        click.echo(json.dumps({
            "path": str(result.path), "package": result.package, "variant": result.variant,
            "kernels": [{"name": k.name, "layer": k.layer, "problem": k.accepted.problem, "kind": k.kind.kind,
                         "best_speedup": k.accepted.best_speedup} for k in result.kernels],
            "refused": [{"problem": r.problem, "reason": r.reason} for r in result.refused],
        }, indent=2))
        return
    click.echo(f"Exported {counted(len(result.kernels), 'kernel')} to {result.path} (build/{result.variant}/{result.package})")
    for k in result.kernels:
        speedup = f"{k.accepted.best_speedup:.2f}x" if k.accepted.best_speedup is not None else "untimed"
        click.echo(f"  {k.layer:<24} {k.accepted.problem}  {k.kind.kind}, {speedup}, {k.accepted.precision}")
    if result.refused:
        click.echo(f"  refused: {describe_refusals(list(result.refused))}")


def default_name(problem: str) -> str:
    stem = problem.rsplit("/", 1)[-1]
    return "kforge-" + "".join(c if c.isalnum() else "-" for c in stem.lower()).strip("-")
