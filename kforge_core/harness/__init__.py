"""The evaluation harness: isolated compile, verify, timing and profile of untrusted candidates.

``Harness(backend=..., problem=..., settings=..., plugins=...).evaluate(candidate)`` returns a :class:`Verdict`.

* ``host/`` runs in KForge's process: the ``Harness``, worker processes and their pool, the sandbox, building
  ahead, the static check of a candidate's source. It never imports candidate code.
* ``worker/`` runs in the worker process (``python -m kforge_core.harness.worker``, or forked from the template
  that imported torch once, ``worker/template.py``) and the build-ahead child: the request loop, the reference,
  verification's comparisons, timing, baselines, what a candidate changed.
* Here, what both sides share: the messages (``protocol``), the plan a sandboxed worker runs under
  (``sandbox_plan``), the launcher that makes its namespaces (``namespace_launcher``), a worker's resource limits
  (``process_limits``), the ``Verdict`` and timing records (``verdict``), the cheat flags (``flags``), the captured
  output's files (``captured``) and the operator trace (``op_trace``); the timed runs as both sides name them are
  ``kforge_core.timing.timed_runs``.

Importing this package does not import torch, nor the host's modules until ``Harness`` is asked for.
"""

from typing import TYPE_CHECKING, Any

from .verdict import PrecisionReached, RuntimeStats, TimingMethod, Verdict

if TYPE_CHECKING:
    from .host.harness import Harness


def __getattr__(name: str) -> Any:
    """``Harness`` loaded when first asked for: a worker imports this package for what both sides share, and the
    host's modules (28 of them) have nothing to do in it."""
    if name == "Harness":
        from .host.harness import Harness

        return Harness
    raise AttributeError(f"module {__name__!r} has no attribute {name!r}")

__all__ = ["Harness", "PrecisionReached", "RuntimeStats", "TimingMethod", "Verdict"]
