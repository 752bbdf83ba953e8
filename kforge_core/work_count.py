"""The arithmetic a problem's reference does, counted per operator on meta tensors (no data, nothing computed).

Each ATen operator the forward dispatches is counted by kind, in the dtype it works in:

* ``matrix``: matrix products, convolutions and attention, by PyTorch's own FLOP formulas
  (``torch.utils.flop_counter``: 2 x M x N x K for a GEMM; bias additions not counted);
* ``elementwise``: one FLOP per output element of a pointwise operator, whatever it computes. A transcendental
  (exp, tanh, erf) costs a GPU more than one instruction, but it runs on the special-function units beside the
  FMA pipes and NVIDIA's roofline does not count it as FLOPs; counting it as one keeps the bound a bound;
* ``reduction``: one FLOP per input element of a reduction (sum, mean, amax, var) or a pooling; softmax,
  log-softmax and the normalizations (layer, group, batch norm) count :data:`FUSED_COSTS` FLOPs per input element,
  the passes their definition makes (max, subtract, exp, sum, divide for a softmax).

Data movement (views, copies, concatenation, indexing) counts nothing: it is the bytes' business. Operators none of
these describe count nothing either, and are listed. Runs the reference only, never a candidate.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

KINDS = ("matrix", "elementwise", "reduction")
# operators without PyTorch's pointwise tag that are pointwise all the same
EXTRA_POINTWISE = frozenset({"hardswish", "hardsigmoid", "hardtanh", "silu", "mish", "softplus", "elu", "leaky_relu",
                             "selu", "celu", "glu", "threshold", "log_sigmoid_forward", "upsample_nearest1d",
                             "upsample_nearest2d", "upsample_nearest3d", "upsample_bilinear2d",
                             "upsample_trilinear3d", "upsample_bicubic2d", "upsample_linear1d"})
# FLOPs per input element of the operators that make several passes over their input
FUSED_COSTS = {"_softmax": 5, "_safe_softmax": 5, "_log_softmax": 5, "native_layer_norm": 7,
               "native_group_norm": 7, "native_batch_norm": 7, "_native_batch_norm_legit": 7,
               "_native_batch_norm_legit_no_training": 4, "logsumexp": 4, "cumsum": 1, "nll_loss_forward": 1,
               "max_pool1d_with_indices": 1, "max_pool2d_with_indices": 1, "max_pool3d_with_indices": 1,
               "avg_pool1d": 1, "avg_pool2d": 1, "avg_pool3d": 1, "_adaptive_avg_pool2d": 1,
               "_adaptive_avg_pool3d": 1, "adaptive_max_pool2d": 1, "adaptive_max_pool3d": 1}
# operators that move or make data: nothing to count, nothing to report
_DATA = frozenset({"view", "_unsafe_view", "reshape", "expand", "permute", "transpose", "t", "unsqueeze", "squeeze",
                   "slice", "select", "as_strided", "clone", "copy_", "_to_copy", "cat", "stack", "empty", "zeros",
                   "ones", "full", "randn", "rand", "normal_", "uniform_", "fill_", "zero_", "detach", "alias",
                   "contiguous", "split", "split_with_sizes", "unsafe_split", "unsafe_chunk", "chunk", "unbind",
                   "index", "index_select", "gather",
                   "embedding", "flip", "roll", "pad", "constant_pad_nd", "lift_fresh", "new_empty", "new_zeros",
                   "empty_like", "zeros_like", "ones_like", "narrow", "unfold", "repeat", "tile", "scalar_tensor",
                   "_local_scalar_dense", "arange", "empty_strided", "masked_fill", "where", "scatter", "stride"})


@dataclass(frozen=True)
class Work:
    """FLOPs of one kind in one dtype, summed over the forward."""

    kind: str  # one of KINDS
    dtype: str  # "float32"
    flops: int


@dataclass(frozen=True)
class WorkCount:
    """What a forward does: its work by kind and dtype, the operators counted as nothing, or why it was not
    counted (``work`` empty then)."""

    work: tuple[Work, ...] = ()
    uncounted_ops: tuple[str, ...] = ()
    reason: str = ""  # why there is no count; empty when there is one

    @property
    def counted(self) -> bool:
        return not self.reason

    def flops(self, kind: str | None = None) -> int:
        return sum(w.flops for w in self.work if kind is None or w.kind == kind)


def count_forward(model: Any, inputs: list[Any]) -> WorkCount:
    """Count ``model(*inputs)`` (meta tensors) operator by operator."""
    import torch

    from .meta_recurrent import one_step_sequences

    counter = _counter_mode()
    with one_step_sequences(model), counter, torch.no_grad():
        model(*inputs)
    totals: dict[tuple[str, str], int] = {}
    for kind, dtype, flops in counter.records:
        totals[(kind, dtype)] = totals.get((kind, dtype), 0) + flops
    work = tuple(Work(kind, dtype, flops) for (kind, dtype), flops in sorted(
        totals.items(), key=lambda item: (KINDS.index(item[0][0]), item[0][1])) if flops)
    return WorkCount(work, tuple(sorted(counter.uncounted)))


def _counter_mode() -> Any:
    """A TorchDispatchMode that records ``(kind, dtype, flops)`` of every operator (defined when torch is here)."""
    import torch
    from torch.utils._python_dispatch import TorchDispatchMode
    from torch.utils.flop_counter import flop_registry

    from .meta_recurrent import repeats

    class Counter(TorchDispatchMode):
        def __init__(self) -> None:
            super().__init__()
            self.records: list[tuple[str, str, int]] = []
            self.uncounted: set[str] = set()

        def __torch_dispatch__(self, func: Any, types: Any, args: Any = (), kwargs: Any = None) -> Any:
            kwargs = kwargs or {}
            out = func(*args, **kwargs)
            packet, name = func._overloadpacket, func._overloadpacket.__name__
            tensors = [a for a in args if isinstance(a, torch.Tensor)]
            first_out = out if isinstance(out, torch.Tensor) else next(
                (o for o in (out if isinstance(out, (tuple, list)) else ()) if isinstance(o, torch.Tensor)), None)
            if packet in flop_registry:
                dtype = tensors[0].dtype if tensors else torch.float32
                self.record("matrix", dtype, int(flop_registry[packet](*args, **kwargs, out_val=out)))
            elif name in FUSED_COSTS and tensors:
                self.record("reduction", tensors[0].dtype, FUSED_COSTS[name] * tensors[0].numel())
            elif torch.Tag.reduction in func.tags and tensors:
                self.record("reduction", tensors[0].dtype, tensors[0].numel())
            elif (torch.Tag.pointwise in func.tags or name in EXTRA_POINTWISE) and first_out is not None:
                self.record("elementwise", first_out.dtype, first_out.numel())
            elif name not in _DATA and tensors:
                self.uncounted.add(name)
            return out

        def record(self, kind: str, dtype: Any, flops: int) -> None:
            """One operator's work: as many times over as it stands for (``meta_recurrent.repeats``)."""
            self.records.append((kind, _name(dtype), flops * repeats()))

    return Counter()


def _name(dtype: Any) -> str:
    return str(dtype).removeprefix("torch.")
