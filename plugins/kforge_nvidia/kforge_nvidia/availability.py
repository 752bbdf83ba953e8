"""What every NVIDIA backend's availability starts from: is there a CUDA device, and which. Answers, never
exceptions."""

from __future__ import annotations


def device_problem() -> str | None:
    """Why no NVIDIA GPU can be used here, or None when one can."""
    import torch

    if torch.version.cuda is None:
        return f"no CUDA device (this torch {torch.__version__} is built without CUDA)"
    if not torch.cuda.is_available():
        return "no CUDA device"
    return None


def device_detail() -> str:
    """GPU 0 in one line: name, architecture, SMs, CUDA version."""
    import torch

    props = torch.cuda.get_device_properties(0)
    return f"{props.name}, sm_{props.major}{props.minor}, {props.multi_processor_count} SMs, CUDA {torch.version.cuda}"
