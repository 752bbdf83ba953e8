"""What the first call of a candidate on an NVIDIA GPU can leave behind: a CUDA context that fails every call now,
and the candidate's line that caused it (the first call itself is the language's warm-up,
``kforge_core.languages.triton.run_forward``)."""

from __future__ import annotations

import traceback
from pathlib import Path

from kforge_core.plugin_api import innermost_candidate_line


def context_poisoned() -> bool:
    """True when the CUDA context fails every call now: a sticky error (an illegal address, a launch failure)
    happened in it, and nothing more can run in this process."""
    import torch

    if not torch.cuda.is_available():
        return False
    try:
        torch.cuda.synchronize()
        torch.empty(1, device="cuda").fill_(0).item()
    except Exception:
        return True
    return False


def describe_exception(exc: BaseException, workdir: Path) -> str:
    """The exception and the innermost line of the candidate's own code that led to it."""
    message = "".join(traceback.format_exception_only(type(exc), exc)).strip()
    own = innermost_candidate_line(exc, workdir)
    if own is None:
        return message
    return f"{Path(own.file).name}:{own.line} in {own.function}: {own.text}\n{message}"
