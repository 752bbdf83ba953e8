"""The tensors of a model's or a module's output."""

from __future__ import annotations

from typing import Any


def leaves(value: Any) -> list[Any]:
    """The tensors of an output, in order (tuples, lists, dicts and objects with a ``to_tuple``: HF outputs)."""
    import torch

    if isinstance(value, torch.Tensor):
        return [value]
    if hasattr(value, "to_tuple"):
        value = value.to_tuple()
    if isinstance(value, dict):
        value = list(value.values())
    if isinstance(value, (tuple, list)):
        return [leaf for item in value for leaf in leaves(item)]
    return []
