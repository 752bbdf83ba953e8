"""``speedup.png``: the speedup of each attempt against the faster baseline, and the best so far."""

from __future__ import annotations

from pathlib import Path

from .run_report import RunReport


def plot_title(report: RunReport) -> str:
    """What the run was, under which precision contract, and the precision its best candidate reached."""
    best = report.best
    bits = best.outcome.precision_bits if best is not None and best.outcome is not None else None
    reached = f"; the best agrees with float64 to {bits:.1f} bits" if bits is not None else ""
    return (f"{report.run.problem_name} on {report.run.backend} ({report.run.id})\n"
            f"{report.contract.name} precision contract{reached}")


def pyplot():  # noqa: ANN201 - matplotlib.pyplot, imported on first use
    """matplotlib's pyplot drawing to files (no display needed), imported only when a plot is drawn."""
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    return plt


def plot_speedups(report: RunReport, target: Path) -> None:
    """Draw the plot into ``target``."""
    plt = pyplot()
    xs, ys, failed, best_x, best_y = [], [], [], [], []
    best = None
    for row in report.attempts:
        speedup = row.outcome.best_speedup if row.rankable and row.outcome is not None else None
        if speedup is None:
            failed.append(row.number)
        else:
            xs.append(row.number)
            ys.append(speedup)
            best = speedup if best is None else max(best, speedup)
        if best is not None:
            best_x.append(row.number)
            best_y.append(best)
    fig, ax = plt.subplots(figsize=(7, 4), dpi=110)
    ax.axhline(1.0, color="grey", linestyle=":", linewidth=1, label="faster baseline")
    if best_x:
        ax.step(best_x, best_y, where="post", color="tab:green", label="best so far")
    ax.scatter(xs, ys, color="tab:blue", zorder=3, label="correct attempt")
    if failed:
        ax.scatter(failed, [0.0] * len(failed), color="tab:red", marker="x", zorder=3, label="failed / no code")
    ax.set_xlabel("attempt (f: functional pass, oR.A: optimization round R, attempt A)")
    timers = sorted({row.outcome.timer for row in report.attempts if row.rankable and row.outcome is not None})
    ax.set_ylabel(f"speedup vs the faster baseline ({', '.join(timers) or 'wall'} time)")
    ax.set_title(plot_title(report), fontsize=9)
    ax.set_xticks([row.number for row in report.attempts] or [1])
    if report.attempts:
        ax.set_xticklabels([row.label for row in report.attempts], fontsize=8)
    ax.set_ylim(bottom=0)
    ax.legend(fontsize=8, loc="best")
    fig.tight_layout()
    fig.savefig(target)
    plt.close(fig)


def plot_search(report: RunReport, target: Path) -> None:
    """A wide search's best speedup so far, by round (0: the functional pass) and by the run's wall time, over
    every ranked candidate."""
    plt = pyplot()
    fig, (by_round, by_time) = plt.subplots(1, 2, figsize=(10, 4), dpi=110, sharey=True)
    for ax, key, label in ((by_round, lambda r: r.round, "round (0: the functional pass)"),
                           (by_time, lambda r: r.elapsed_s, "wall time of the run (s)")):
        rows = sorted(report.attempts, key=key)
        ranked = [(key(r), r.speedup) for r in rows if r.speedup is not None]
        ax.scatter([x for x, _ in ranked], [y for _, y in ranked], color="tab:blue", s=12, zorder=3,
                   label="correct candidate")
        best_x, best_y, best = [], [], None
        for x, y in ranked:
            best = y if best is None else max(best, y)
            best_x.append(x)
            best_y.append(best)
        if best_x:
            ax.step(best_x, best_y, where="post", color="tab:green", label="best so far")
        ax.axhline(1.0, color="grey", linestyle=":", linewidth=1)
        ax.set_xlabel(label)
        ax.set_ylim(bottom=0)
    from matplotlib.ticker import MaxNLocator

    by_round.xaxis.set_major_locator(MaxNLocator(integer=True))
    by_round.set_ylabel("speedup vs the faster baseline")
    by_round.legend(fontsize=8, loc="best")
    fig.suptitle(plot_title(report), fontsize=9)
    fig.tight_layout()
    fig.savefig(target)
    plt.close(fig)
