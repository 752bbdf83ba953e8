"""KForge's core: the plugin contract, problems, the harness, the agents and their loop.

Importing this package loads no plugin and does no heavy work.
"""

from .errors import KForgeError
from .hookspecs import hookimpl
from .records import (
    Availability,
    Backend,
    Candidate,
    CompileResult,
    Example,
    Failure,
    Flag,
    Image,
    KernelMetrics,
    Lowering,
    Problem,
    ProfileResult,
    ProfileSummary,
    SourceCheck,
    SourceFile,
    StageContext,
    TrialError,
    ValueSpec,
    VerifyResult,
)
from .timing.stage_timer import StageTimer

__all__ = [
    "Availability", "Backend", "Candidate", "CompileResult", "Example", "Failure", "Flag", "Image",
    "KForgeError", "KernelMetrics", "Lowering", "Problem", "ProfileResult", "ProfileSummary", "SourceCheck",
    "SourceFile", "StageContext", "StageTimer", "TrialError", "ValueSpec", "VerifyResult", "hookimpl",
]
