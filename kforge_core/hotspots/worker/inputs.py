"""``get_inputs`` as served: each captured value written as an expression that makes a value of the same shape and
dtype: random values for floating tensors, and what the model gave where the values carry meaning (positions as
an ``arange``, a causal mask as a triangle, small integer and boolean tensors as they were)."""

from __future__ import annotations

from typing import Any

SMALL = 64  # integer and boolean tensors of at most this many elements are written out as they were


def expression(value: Any) -> str:
    import torch

    if isinstance(value, torch.Tensor):
        return tensor_expression(value)
    if isinstance(value, tuple):
        items = ", ".join(expression(v) for v in value)
        return f"({items},)" if len(value) == 1 else f"({items})"
    if isinstance(value, list):
        return "[" + ", ".join(expression(v) for v in value) + "]"
    if isinstance(value, dict):
        return "{" + ", ".join(f"{k!r}: {expression(v)}" for k, v in value.items()) + "}"
    return literal(value)


def literal(value: Any) -> str:
    """A plain value as Python source (a ``torch.dtype`` as ``torch.bfloat16``)."""
    import torch

    if isinstance(value, torch.dtype):
        return f"torch.{str(value).removeprefix('torch.')}"
    if isinstance(value, float) and value != value:
        return "float('nan')"
    if isinstance(value, float) and value in (float("inf"), float("-inf")):
        return f"float('{value}')"
    return repr(value)


def tensor_expression(t: Any) -> str:
    import torch

    dtype, shape = literal(t.dtype), list(t.shape)
    t = t.detach().cpu()
    if t.dtype == torch.bool:
        return _bool_expression(t)
    if t.is_floating_point():
        fill = _mask_fill(t)
        if fill is not None:
            return f"torch.zeros({shape}, dtype={dtype}).masked_fill(~{_bool_expression(t == 0)}, {fill})"
        return f"torch.randn({shape}, dtype={dtype})"
    if t.is_complex():
        return f"torch.randn({shape}, dtype={dtype})"
    positions = _arange(t)
    if positions is not None:
        return positions
    if t.numel() <= SMALL:
        return f"torch.tensor({t.tolist()}, dtype={dtype})"
    low, high = int(t.min()), int(t.max())
    return f"torch.randint({low}, {high + 1}, {shape}, dtype={dtype})"


def _arange(t: Any) -> str | None:
    """``t`` as positions: the same run of consecutive integers along its last dimension, everywhere."""
    import torch

    if t.ndim == 0 or t.shape[-1] < 2:
        return None
    start = int(t.reshape(-1)[0])
    row = torch.arange(start, start + t.shape[-1], dtype=t.dtype)
    if not torch.equal(t, row.expand(t.shape)):
        return None
    return (f"torch.arange({start}, {start + t.shape[-1]}, dtype={literal(t.dtype)})"
            f".expand({list(t.shape)}).contiguous()")


def _bool_expression(t: Any) -> str:
    import torch

    shape = list(t.shape)
    if bool(t.all()):
        return f"torch.ones({shape}, dtype=torch.bool)"
    if not bool(t.any()):
        return f"torch.zeros({shape}, dtype=torch.bool)"
    if t.ndim >= 2:
        q, k = t.shape[-2], t.shape[-1]
        causal = torch.ones(q, k, dtype=torch.bool).tril(k - q)
        if torch.equal(t, causal.expand(t.shape)):
            return f"torch.ones({q}, {k}, dtype=torch.bool).tril({k - q}).expand({shape}).contiguous()"
    if t.numel() <= SMALL:
        return f"torch.tensor({t.tolist()}, dtype=torch.bool)"
    return f"(torch.rand({shape}) < {float(t.float().mean()):.4g})"


def _mask_fill(t: Any) -> str | None:
    """The fill of an additive attention mask (values only 0 and one very negative number), else None."""
    import torch

    if t.numel() == 0:
        return None
    masked = t[t != 0]
    if masked.numel() == 0 or masked.numel() == t.numel():
        return None
    value = float(masked[0])
    if not bool((masked == masked[0]).all()):
        return None
    if value == float("-inf"):
        return "float('-inf')"
    if value == float(torch.finfo(t.dtype).min):
        return f"torch.finfo({literal(t.dtype)}).min"
    return None
