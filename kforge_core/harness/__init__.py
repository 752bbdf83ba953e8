"""The evaluation harness: isolated compile, verify, timing and profile of untrusted candidates.

``Harness(backend=..., problem=..., settings=..., plugins=...).evaluate(candidate)`` returns a :class:`Verdict`.
Candidate code runs only in worker processes (``kforge_core.harness.worker``); nothing here imports it, and
importing this package does not import torch.
"""

from .harness import Harness
from .verdict import PrecisionReached, RuntimeStats, TimingMethod, Verdict

__all__ = ["Harness", "PrecisionReached", "RuntimeStats", "TimingMethod", "Verdict"]
