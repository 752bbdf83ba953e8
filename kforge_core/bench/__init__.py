"""``kforge bench``: a suite of problems evaluated (existing solutions, or the agent loop on each) on one or many
devices, with KernelBench's fast_p, geomean speedups and a report; results kept in the run store as they come."""

from .plan import BenchPlan
from .results import ProblemJob, ProblemResult
from .session import ExecutorChoice, plan_bench, resume_bench, start_bench
from .summary import summarize

__all__ = ["BenchPlan", "ExecutorChoice", "ProblemJob", "ProblemResult", "plan_bench", "resume_bench",
           "start_bench", "summarize"]
