"""What a finished (or stopped) run leaves behind: best.py, report.md, the speedup plot; and `kforge show`."""

from .outputs import RunOutputs, read_outputs, write_outputs
from .run_report import AttemptRow, RoundRow, RunReport, UsageRow

__all__ = ["AttemptRow", "RoundRow", "RunOutputs", "RunReport", "UsageRow", "read_outputs", "write_outputs"]
