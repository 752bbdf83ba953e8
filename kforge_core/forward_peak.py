"""The most memory a forward's own tensors hold at once: its intermediates and its outputs, counted while the
problem is described (on the ``meta`` device, where nothing is computed, or on the CPU where it must run there).

A problem's footprint counts one call's inputs and outputs and the model's weights; a call also needs what it makes
on the way. KernelBench's ``31_VisionAttention`` takes 32 MiB of inputs and holds two 4 GiB score matrices at once
inside its forward: three of KForge's processes on one device held 93 GB for it. What the forward makes is seen at
PyTorch's dispatcher: each operator's fresh outputs are counted from the moment they are made until the last tensor
over their storage is gone; a view, an in-place result or any alias of a storage already counted (or of one made
before the forward, an input or a weight) adds nothing. Library scratch space (cuBLAS' workspace) is not seen, nor
a tensor without one storage of its own (a sparse one).
"""

from __future__ import annotations

import weakref
from typing import Any

import torch
from torch.utils._python_dispatch import TorchDispatchMode
from torch.utils._pytree import tree_leaves


def _storage(tensor: torch.Tensor) -> tuple[int, int] | None:
    """The storage's identity (the address of its implementation: meta tensors all have data pointer 0) and its
    bytes; None for a tensor without one storage of its own (a sparse one), which is not counted."""
    try:
        storage = tensor.untyped_storage()
    except NotImplementedError:  # "Cannot access storage of SparseTensorImpl"
        return None
    return storage._cdata, storage.nbytes()


class ForwardPeak(TorchDispatchMode):
    """Counts the bytes of the storages operators make while the mode is on: ``peak`` is the most held at once."""

    def __init__(self) -> None:
        super().__init__()
        self.live = 0
        self.peak = 0
        self._storages: dict[int, list[int]] = {}  # storage key -> [tensors over it still alive, its bytes]

    def __torch_dispatch__(self, func: Any, types: Any, args: tuple[Any, ...] = (), kwargs: Any = None) -> Any:
        out = func(*args, **(kwargs or {}))
        given = {storage[0] for t in tree_leaves((args, kwargs))
                 if isinstance(t, torch.Tensor) and (storage := _storage(t)) is not None}
        for tensor in tree_leaves(out):
            if isinstance(tensor, torch.Tensor) and (storage := _storage(tensor)) is not None:
                self._made(tensor, storage, given)
        return out

    def _made(self, tensor: torch.Tensor, storage: tuple[int, int], given: set[int]) -> None:
        key, size = storage
        entry = self._storages.get(key)
        if entry is None:
            if key in given:  # an alias of what the forward was given or made before it: nothing new
                return
            entry = self._storages[key] = [0, size]
            self.live += entry[1]
            self.peak = max(self.peak, self.live)
        entry[0] += 1
        # a tensor the model keeps past the forward (a cached mask) is never counted down: nothing to do at exit
        weakref.finalize(tensor, self._gone, key).atexit = False

    def _gone(self, key: int) -> None:
        entry = self._storages[key]
        entry[0] -= 1
        if entry[0] == 0:
            self.live -= entry[1]
            del self._storages[key]
