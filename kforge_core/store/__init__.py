"""The run store: SQLite for the steps of every run (and the problems of every bench), and a directory of
artifacts per run."""

from .artifacts import RunDirectory
from .bench_store import BenchInfo, BenchProblemRow, BenchStore
from .run_store import LLMCall, RunInfo, RunStore, StepRecord

__all__ = ["BenchInfo", "BenchProblemRow", "BenchStore", "LLMCall", "RunDirectory", "RunInfo", "RunStore",
           "StepRecord"]
