"""What PyTorch's ``meta`` kernels leave unchecked, checked while the reference runs there: a probe on meta tensors
must fail wherever the real device would, or a size the reference pins looks free and its variant is derived for
nothing (the referee then drops it: the reference fails at it).

* A transposed convolution's input channels: ``aten.convolution`` with ``transposed=True`` on meta tensors accepts
  any channel count, where every device requires the weight's first size (``ConvTranspose2d(32, 64, 4)`` given 16
  channels). Module or functional, both reach it.
"""

from __future__ import annotations

from typing import Any


def checked_meta_mode() -> Any:
    """A dispatch mode, entered around a run on meta tensors, that raises where a device would and meta does not."""
    import torch
    from torch.utils._python_dispatch import TorchDispatchMode

    convolution = torch.ops.aten.convolution.default

    class _Checked(TorchDispatchMode):
        def __torch_dispatch__(self, func: Any, types: Any, args: Any = (), kwargs: Any = None) -> Any:
            kwargs = kwargs or {}
            if func is convolution:
                _transposed_channels(*args, **kwargs)
            return func(*args, **kwargs)

    return _Checked()


def _transposed_channels(input: Any, weight: Any, bias: Any, stride: Any, padding: Any, dilation: Any,
                         transposed: bool, *rest: Any, **kwargs: Any) -> None:
    if transposed and input.dim() == weight.dim() and input.shape[1] != weight.shape[0]:
        raise RuntimeError(f"Given transposed=1, weight of size {list(weight.shape)}, expected input"
                           f"{list(input.shape)} to have {weight.shape[0]} channels, but got {input.shape[1]} "
                           "channels instead")
