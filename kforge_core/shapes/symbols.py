"""The sizes of a problem's inputs, grouped the way they must change: every dimension of every input tensor that
has the same size is one :class:`Symbol` (two inputs that share a size, a matmul's inner dimension, change
together), as PyTorch's own dynamic shapes assume of sizes that are equal."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any, Iterable


@dataclass(frozen=True)
class Dim:
    """One dimension of one input tensor: the tensor's place among the inputs' tensors (in ``values.tensor_leaves``
    order) and the axis."""

    leaf: int
    axis: int


@dataclass(frozen=True)
class Symbol:
    """A size and every input dimension that has it."""

    size: int
    dims: tuple[Dim, ...]

    def by_axis(self) -> list[Symbol]:
        """The symbol split by axis (its dimensions at axis 0 apart from those at axis 1, ...): where a batch of 128
        and a width of 128 only share a size by chance, the two can then be told apart."""
        axes = sorted({dim.axis for dim in self.dims})
        return [Symbol(self.size, tuple(d for d in self.dims if d.axis == axis)) for axis in axes]


def leaf_shapes(inputs: list[Any]) -> list[tuple[int, ...]]:
    """The shape of every tensor inside ``inputs``, in ``values.tensor_leaves`` order."""
    from ..values import tensor_leaves

    return [tuple(tensor.shape) for _, tensor in tensor_leaves(inputs)]


def symbols_of(shapes: list[tuple[int, ...]]) -> list[Symbol]:
    """The inputs' sizes (of ``leaf_shapes``) as symbols, in order of first appearance."""
    found: dict[int, list[Dim]] = {}
    for leaf, shape in enumerate(shapes):
        for axis, size in enumerate(shape):
            found.setdefault(size, []).append(Dim(leaf, axis))
    return [Symbol(size, tuple(dims)) for size, dims in found.items()]


def resized(shapes: list[tuple[int, ...]], changes: Iterable[tuple[Symbol, int]]) -> list[tuple[int, ...]]:
    """``shapes`` with each symbol's dimensions at its new size."""
    new = [list(shape) for shape in shapes]
    for symbol, size in changes:
        for dim in symbol.dims:
            new[dim.leaf][dim.axis] = size
    return [tuple(shape) for shape in new]
