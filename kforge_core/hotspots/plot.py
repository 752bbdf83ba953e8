"""``hotspots.png``: each phase's largest shares of device time as bars, extracted groups apart from the rest."""

from __future__ import annotations

import re
from pathlib import Path
from typing import Any

from ..report.plot import pyplot

BARS = 12  # per phase


def plot_shares(report: dict[str, Any], title: str, target: Path) -> None:
    plt = pyplot()
    phases = list(report["phases"])
    fig, axes = plt.subplots(len(phases), 1, figsize=(8, 0.35 * BARS * len(phases) + 1.2), dpi=110, squeeze=False)
    for ax, phase in zip(axes[:, 0], phases):
        rows = [r for r in report["rows"] if r["phase"] == phase][:BARS][::-1]
        labels = [f"{r['group']}  {_first_shape(r['shapes'])}" for r in rows]
        colors = ["tab:blue" if r.get("problem") else ("tab:gray" if r["kind"] == "aten" else "tab:orange")
                  for r in rows]
        ax.barh(range(len(rows)), [100 * r["share"] for r in rows], color=colors)
        ax.set_yticks(range(len(rows)))
        ax.set_yticklabels(labels, fontsize=7)
        ax.set_xlabel(f"share of the {phase} phase's device time (%)", fontsize=8)
        ax.set_title(f"{phase}: {report['phases'][phase]['measured_step_ms']:.4g} ms a step", fontsize=9)
    handles = [plt.Rectangle((0, 0), 1, 1, color=c) for c in ("tab:blue", "tab:orange", "tab:gray")]
    fig.suptitle(title, fontsize=9)
    fig.tight_layout(rect=(0, 0.04, 1, 1))
    fig.legend(handles, ["extracted as a problem", "module, not extracted", "ATen operator outside the modules"],
               fontsize=7, loc="lower center", ncol=3)
    fig.savefig(target)
    plt.close(fig)


def _first_shape(shapes: str) -> str:
    """The first tensor of a row's shapes (``bfloat16[1, 128, 4096]``)."""
    found = re.search(r"[a-z0-9]+\[[0-9, ]*\]|\[[0-9, ]*\]", shapes)
    return found.group(0) if found else ""
