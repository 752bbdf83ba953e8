"""Host copies of device tensors, and host memory for large tensors bound for a device. A large one goes through
page-locked memory, which the runtime caches from one copy to the next: copying a large output into fresh pageable
memory is tens of times slower than into page-locked memory (docs/measurements.md has the figures), and its copy
back to the device, a chunk at a time, is faster from there too."""

from __future__ import annotations

from typing import Any

import torch

PAGE_LOCKED_FROM_BYTES = 64 << 20  # tensors from this size up come to the host through page-locked memory


def host_copy(tensor: Any) -> Any:
    """A contiguous host copy of ``tensor`` (anything else is returned as it is)."""
    if not isinstance(tensor, torch.Tensor):
        return tensor
    source = tensor.detach()
    if not source.is_cpu and source.numel() * source.element_size() >= PAGE_LOCKED_FROM_BYTES:
        staging = _page_locked(source.shape, source.dtype)
        if staging is not None:
            return staging.copy_(source)
    return source.to("cpu", copy=True).contiguous()


def host_empty(numel: int, dtype: torch.dtype, *, for_device: bool) -> torch.Tensor:
    """An uninitialised flat host tensor, page-locked where it is large and bound ``for_device`` (an accelerator
    whose runtime the process uses already): the referee puts a shipped output's pieces together in it, and putting
    a large output's pieces together in fresh pageable memory took longer than reading and digesting them."""
    if for_device and numel * dtype.itemsize >= PAGE_LOCKED_FROM_BYTES:
        locked = _page_locked((numel,), dtype)
        if locked is not None:
            return locked
    return torch.empty(numel, dtype=dtype)


def _page_locked(shape: Any, dtype: torch.dtype) -> torch.Tensor | None:
    """Uninitialised page-locked host memory, or None where the device runtime has none to give."""
    try:
        return torch.empty(shape, dtype=dtype, pin_memory=True)
    except RuntimeError:
        return None
