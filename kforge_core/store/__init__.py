"""The run store: SQLite for the steps of every run, and a directory of artifacts per run."""

from .artifacts import RunDirectory
from .run_store import LLMCall, RunInfo, RunStore, StepRecord

__all__ = ["LLMCall", "RunDirectory", "RunInfo", "RunStore", "StepRecord"]
