"""Whether the CUDA context still works after a candidate ran (the first call itself is Triton's language warm-up,
``kforge_core.languages.triton.run_forward``)."""

from __future__ import annotations


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
