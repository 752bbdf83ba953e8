"""What a finished (or stopped) run leaves behind: best.py, report.md, the speedup plot; and `kforge show`."""

from .outputs import RunOutputs, write_outputs
from .run_report import AttemptRow, RoundRow, RunReport, UsageRow

__all__ = ["AttemptRow", "RoundRow", "RunOutputs", "RunReport", "UsageRow", "write_outputs"]
