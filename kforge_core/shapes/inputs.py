"""A shape variant's inputs, made the same way in every process from the seed in force: the candidate's worker,
the referee and the KForge process (on meta tensors, to check a derived variant) call the same function.

A declared variant's inputs are what the problem's ``get_input_variants()`` makes. A derived variant's are the
problem's own ``get_inputs()`` cut or grown to the variant's shapes: a smaller size keeps the first elements, a
larger one joins further draws of ``get_inputs()`` (each from a seed of its own, so no block repeats another), so
the values keep the problem's own distribution and ranges (indices stay below the sizes they index, positive inputs
stay positive).
"""

from __future__ import annotations

import math
from types import ModuleType
from typing import Any, Callable

from ..records import ShapeVariant
from .declared import declared_inputs

DRAW_STRIDE = 1_000_003  # a derived variant's further draws: the seed in force plus a multiple of this


def variant_maker(module: ModuleType, variant: ShapeVariant) -> Callable[[], list[Any]]:
    """A ``get_inputs()`` for ``variant``: its inputs, under the torch seed and device in force."""
    if variant.origin == "declared":
        return lambda: declared_inputs(module, variant.name)
    shapes = [tuple(tensor.shape) for spec in variant.inputs for tensor in spec.tensors()]
    return lambda: resized_inputs(module.get_inputs, shapes)


def resized_inputs(get_inputs: Callable[[], Any], shapes: list[tuple[int, ...]]) -> list[Any]:
    """``get_inputs()`` with its tensors (in ``values.tensor_leaves`` order) cut or grown to ``shapes``."""
    import torch

    from ..values import map_tensors, tensors_in

    base = torch.initial_seed()
    first = list(get_inputs())
    leaves = tensors_in(first)
    if len(leaves) != len(shapes):
        raise ValueError(f"get_inputs() made {len(leaves)} tensors, the variant has shapes for {len(shapes)}")
    copies = max((_blocks(tuple(t.shape), shape) for t, shape in zip(leaves, shapes)), default=1)
    draws = [leaves]
    for copy in range(1, copies):
        torch.manual_seed((base + DRAW_STRIDE * copy) % (1 << 63))
        draws.append(tensors_in(list(get_inputs())))
    places = iter(range(len(leaves)))

    def fit(_: Any) -> Any:
        place = next(places)
        return _fit([draw[place] for draw in draws], shapes[place])

    return map_tensors(first, fit)


def _blocks(source: tuple[int, ...], target: tuple[int, ...]) -> int:
    """How many copies of a tensor of shape ``source`` make one of shape ``target``."""
    if len(source) != len(target):
        raise ValueError(f"a tensor of shape {list(source)} cannot take the shape {list(target)}")
    return math.prod(_counts(source, target))


def _counts(source: tuple[int, ...], target: tuple[int, ...]) -> list[int]:
    """Along each axis, how many blocks of ``source`` cover ``target``."""
    return [-(-t // s) if s else 1 for s, t in zip(source, target)]


def _fit(copies: list[Any], target: tuple[int, ...]) -> Any:
    """A tensor of shape ``target`` from distinct copies of one tensor: tiled (copy k in block k), then cut."""
    source = tuple(copies[0].shape)
    if source == target:
        return copies[0]
    counts = _counts(source, target)
    whole = _tiled(copies[:math.prod(counts)], counts, 0)
    return whole[tuple(slice(0, size) for size in target)].clone()


def _tiled(blocks: list[Any], counts: list[int], axis: int) -> Any:
    import torch

    if axis == len(counts):
        return blocks[0]
    stride = math.prod(counts[axis + 1:])
    parts = [_tiled(blocks[k * stride:(k + 1) * stride], counts, axis + 1) for k in range(counts[axis])]
    return torch.cat(parts, axis) if len(parts) > 1 else parts[0]
