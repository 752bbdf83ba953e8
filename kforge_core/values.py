"""The values a problem passes around, walked in one place.

KernelBench problems return from ``get_inputs()`` and ``get_init_inputs()`` numbers, bools, strings, None,
``torch.dtype``, ``torch.Size``, tensors, and tuples, lists and dicts of all of these, nested; a forward may return
nested tuples and lists of tensors. Every part of the harness that moves, clones, checks or describes such values
walks them with the functions here, so a tensor three levels down is treated exactly like a top-level one.
"""

from __future__ import annotations

from typing import Any, Callable, Iterator

from .records import ValueSpec

_PLAIN = {bool: "bool", int: "int", float: "float", str: "str", type(None): "none"}


class UnsupportedValue(ValueError):
    """A value the harness cannot pass on safely; ``path`` says where it is (``[3][1]``)."""

    def __init__(self, path: str, value: Any) -> None:
        super().__init__(f"{path} is a {type(value).__name__}")
        self.path = path
        self.value = value


def _is_sequence(value: Any) -> bool:
    import torch

    return isinstance(value, (tuple, list)) and not isinstance(value, torch.Size)


def map_tensors(value: Any, fn: Callable[[Any], Any]) -> Any:
    """``value`` with every tensor inside it replaced by ``fn(tensor)``; containers are rebuilt (so a copy never
    shares a list with the original), everything else is kept as it is (it is immutable)."""
    import torch

    if isinstance(value, torch.Tensor):
        return fn(value)
    if _is_sequence(value):
        items = [map_tensors(v, fn) for v in value]
        if isinstance(value, list):
            return items
        return type(value)(*items) if hasattr(value, "_fields") else tuple(items)
    if isinstance(value, dict):
        return {key: map_tensors(v, fn) for key, v in value.items()}
    return value


def tensor_leaves(value: Any, path: str = "") -> Iterator[tuple[str, Any]]:
    """``(path, tensor)`` for every tensor inside ``value``, depth first; paths read ``[1][0]`` or ``['key']``."""
    import torch

    if isinstance(value, torch.Tensor):
        yield path, value
    elif _is_sequence(value):
        for i, item in enumerate(value):
            yield from tensor_leaves(item, f"{path}[{i}]")
    elif isinstance(value, dict):
        for key, item in value.items():
            yield from tensor_leaves(item, f"{path}[{key!r}]")


def tensors_in(values: Any) -> list[Any]:
    """Every tensor inside ``values``, in order."""
    return [tensor for _, tensor in tensor_leaves(values)]


def tensor_bytes(values: Any) -> int:
    """Bytes held by the tensors inside ``values``."""
    return sum(t.numel() * t.element_size() for t in tensors_in(values))


# ------------------------------------------------------------------------------------------------ outputs


def flatten_output(result: Any) -> tuple[list[Any], tuple[Any, ...]]:
    """A forward's result as its leaves (what is not a tuple or list) and its structure.

    The top level is a tuple of outputs: one tensor counts as a 1-tuple, and a top-level list as a tuple, as
    KernelBench's eval allows. The structure is a nested tuple with None for each leaf, so two results have the
    same shape of nesting exactly when their structures are equal. Nothing but ``isinstance`` touches the
    leaves: a tensor subclass gets no chance to run its own code here.
    """
    top = tuple(result) if _is_sequence(result) else (result,)
    leaves: list[Any] = []
    return leaves, tuple(_structure_of(v, leaves) for v in top)


def _structure_of(value: Any, leaves: list[Any]) -> Any:
    """``value``'s structure, its leaves appended to ``leaves``. A module-level function, not a closure that calls
    itself: such a closure is a reference cycle, which kept every call's outputs alive until the garbage collector
    ran (several calls' outputs at once on the device, in every worker)."""
    if _is_sequence(value):
        return tuple(_structure_of(v, leaves) for v in value)
    leaves.append(value)
    return None


def output_labels(structure: tuple[Any, ...]) -> list[str]:
    """One label per leaf of ``structure``: ``output 0``, ``output 1[0]``, ..."""
    labels: list[str] = []
    for i, node in enumerate(structure):
        _label_leaves(node, f"output {i}", labels)
    return labels


def _label_leaves(node: Any, label: str, labels: list[str]) -> None:
    if node is None:
        labels.append(label)
        return
    for i, child in enumerate(node):
        _label_leaves(child, f"{label}[{i}]", labels)


def describe_structure(structure: tuple[Any, ...], leaves: list[Any] | None = None) -> str:
    """``(tensor, (tensor, tensor))``: the structure with each leaf's type (``tensor`` when no leaves are given)."""
    names = iter([_leaf_name(leaf) for leaf in leaves] if leaves is not None else [])
    parts = [_rendered(node, names) for node in structure]
    return parts[0] if len(parts) == 1 else "(" + ", ".join(parts) + ")"


def _rendered(node: Any, names: Iterator[str]) -> str:
    if node is None:
        return next(names, "tensor")
    return "(" + ", ".join(_rendered(child, names) for child in node) + ("," if len(node) == 1 else "") + ")"


def _leaf_name(value: Any) -> str:
    import torch

    return "tensor" if type(value) in (torch.Tensor, torch.nn.Parameter) else type(value).__qualname__


# ------------------------------------------------------------------------------------------------ describing


def describe_value(value: Any, path: str = "") -> ValueSpec:
    """A ValueSpec for ``value`` and everything inside it; :class:`UnsupportedValue` names the first part that
    is none of the kinds KernelBench problems use."""
    import torch

    if isinstance(value, torch.Tensor):
        return ValueSpec("tensor", tuple(value.shape), _dtype_name(value.dtype))
    if isinstance(value, torch.Size):
        return ValueSpec("size", tuple(value))
    if isinstance(value, torch.dtype):
        return ValueSpec("dtype", value=_dtype_name(value))
    kind = _PLAIN.get(type(value))
    if kind is not None:
        return ValueSpec(kind, value=repr(value) if kind != "none" else "")
    if _is_sequence(value):
        items = tuple(describe_value(v, f"{path}[{i}]") for i, v in enumerate(value))
        return ValueSpec("list" if isinstance(value, list) else "tuple", items=items)
    if isinstance(value, dict):
        keys = tuple(value)
        if not all(isinstance(key, str) for key in keys):
            raise UnsupportedValue(path, value)
        return ValueSpec("dict", items=tuple(describe_value(value[k], f"{path}[{k!r}]") for k in keys), keys=keys)
    raise UnsupportedValue(path, value)


def _dtype_name(dtype: Any) -> str:
    return str(dtype).removeprefix("torch.")
