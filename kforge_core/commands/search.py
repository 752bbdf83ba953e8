"""``kforge search "conv3d groupnorm"``: what the kernel index holds for some words, with scores."""

from __future__ import annotations

import json
from pathlib import Path

import click
from rich.console import Console
from rich.table import Table

from ..app import App
from ..errors import KForgeError
from ..retrieval import KernelIndexStore, index_path, search as search_index
from ..retrieval.embedding import embedding_model
from ..plural import counted


@click.command("search")
@click.argument("query")
@click.option("--backend", help="List this backend's kernels first.")
@click.option("--runs-dir", type=click.Path(file_okay=False, path_type=Path), help="Where runs are kept.")
@click.option("-k", "--limit", type=click.IntRange(min=1), default=10, show_default=True, help="How many to list.")
@click.option("--json", "as_json", is_flag=True, help="Print a JSON list.")
@click.pass_obj
def search(app: App, query: str, backend: str | None, runs_dir: Path | None, limit: int, as_json: bool) -> None:
    """The indexed kernels whose problems best match QUERY (operator names: conv3d, groupnorm, matmul, gelu...),
    best first, with their BM25 scores."""
    settings = app.settings(runs_dir=runs_dir)
    if not index_path(settings.runs_dir).is_file():
        raise KForgeError(f"there is no kernel index in {settings.runs_dir}",
                          hint="runs add their best kernel as they finish; `kforge index` builds it from the runs")
    with KernelIndexStore(settings.runs_dir) as store:
        kernels = store.kernels()
    embed = embedding_model(settings.retrieval.embed_model) if settings.retrieval.embed_model else None
    hits = search_index(kernels, query, backend=backend, limit=limit, embed=embed)
    rows = [{"key": h.kernel.key, "problem": h.kernel.problem.name, "backend": h.kernel.backend,
             "score": round(h.score, 4), "operators": list(h.kernel.problem.operators),
             "speedup": h.kernel.speedup, "runtime_ms": h.kernel.runtime_ms, "precision": h.kernel.precision,
             "verdict": h.kernel.verdict} for h in hits]
    if as_json:
        click.echo(json.dumps(rows, indent=2))
        return
    if not rows:
        click.echo(f"no kernel of the {len(kernels)} in the index matches {query!r}")
        return
    table = Table(title=f"{counted(len(kernels), 'kernel')} in {index_path(settings.runs_dir)}")
    for column in ("score", "problem", "backend", "speedup", "operators", "from"):
        table.add_column(column, overflow="fold")
    for row in rows:
        speedup = f"{row['speedup']:.2f}x" if row["speedup"] is not None else "-"
        table.add_row(f"{row['score']:.2f}", row["problem"], row["backend"], speedup,
                      ", ".join(row["operators"]), row["key"])
    Console(highlight=False).print(table)
