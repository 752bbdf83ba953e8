"""The one walker over problem values: tensors anywhere inside tuples, lists and dicts are found, moved, cloned and
described; a forward's nested result is flattened with its structure."""

from __future__ import annotations

from collections import namedtuple

import pytest
import torch

from kforge_core.values import (
    UnsupportedValue, describe_value, describe_structure, flatten_output, map_tensors, output_labels, tensor_bytes,
    tensor_leaves,
)

Pair = namedtuple("Pair", "left right")


def nested():
    return [torch.ones(2), (3, [torch.zeros(4), None]), {"gain": torch.full((3,), 2.0), "mode": "mean"},
            torch.Size([2, 3]), torch.float16, Pair(torch.ones(1), 1.5)]


def test_map_tensors_rebuilds_every_container_and_keeps_the_rest():
    values = nested()
    copied = map_tensors(values, torch.Tensor.clone)
    assert copied[1][1] is not values[1][1]  # a list inside is a new list: a candidate appending to it changes nothing
    assert copied[1][1][0] is not values[1][1][0] and torch.equal(copied[1][1][0], values[1][1][0])
    assert copied[2]["mode"] == "mean" and copied[3] == torch.Size([2, 3]) and copied[4] is torch.float16
    assert isinstance(copied[5], Pair) and copied[5].right == 1.5
    assert type(copied[1]) is tuple and type(copied[1][1]) is list


def test_tensor_leaves_name_where_each_tensor_is():
    paths = [path for path, _ in tensor_leaves(nested())]
    assert paths == ["[0]", "[1][1][0]", "[2]['gain']", "[5][0]"]
    assert tensor_bytes(nested()) == 4 * (2 + 4 + 3 + 1)


def test_describe_value_covers_what_kernelbench_problems_pass():
    described = [describe_value(v).describe() for v in nested()]
    assert described == ["tensor[2] float32", "tuple(int 3, list(tensor[4] float32, None))",
                         "dict(gain: tensor[3] float32, mode: str 'mean')", "torch.Size([2, 3])", "torch.float16",
                         "tuple(tensor[1] float32, float 1.5)"]
    assert [s.describe() for s in describe_value(nested()).tensors()] == [
        "tensor[2] float32", "tensor[4] float32", "tensor[3] float32", "tensor[1] float32"]
    with pytest.raises(UnsupportedValue) as info:
        describe_value([1, {"f": object()}], "[2]")
    assert info.value.path == "[2][1]['f']"


def test_a_nested_result_flattens_to_its_leaves_and_structure():
    a, b, c = torch.ones(1), torch.ones(2), torch.ones(3)
    leaves, structure = flatten_output((a, [b, (c,)]))
    assert leaves == [a, b, c] and structure == (None, (None, (None,)))
    assert output_labels(structure) == ["output 0", "output 1[0]", "output 1[1][0]"]
    assert describe_structure(structure) == "(tensor, (tensor, (tensor,)))"
    assert flatten_output(a)[1] == flatten_output([a])[1] == (None,)  # one tensor is a 1-tuple, as before
    assert describe_structure(*reversed(flatten_output((a, 3)))) == "(tensor, int)"


def test_a_flattened_results_tensors_go_the_moment_the_last_reference_to_them_goes():
    # a closure that called itself was a reference cycle holding the leaves: every timed call's outputs stayed on
    # the device until the garbage collector ran (16 GiB more than one call needed, for a 4 GiB output)
    import gc
    import weakref

    enabled = gc.isenabled()
    gc.disable()
    try:
        result = (torch.ones(4), [torch.zeros(2), (torch.ones(1),)])
        refs = [weakref.ref(t) for t in (result[0], result[1][0], result[1][1][0])]
        leaves, structure = flatten_output(result)
        assert output_labels(structure) == ["output 0", "output 1[0]", "output 1[1][0]"]
        assert describe_structure(structure, leaves) == "(tensor, (tensor, (tensor,)))"
        del result, leaves, structure
        assert [ref() for ref in refs] == [None, None, None]
    finally:
        if enabled:
            gc.enable()


def test_no_function_on_a_path_that_holds_tensors_is_a_closure_that_calls_itself():
    import ast
    from pathlib import Path

    import kforge_core

    root = Path(kforge_core.__file__).parent
    found = []
    for path in [root / "values.py", *(root / "harness").rglob("*.py"), *(root / "builtin").rglob("*.py")]:
        for outer in ast.walk(ast.parse(path.read_text())):
            if not isinstance(outer, (ast.FunctionDef, ast.AsyncFunctionDef)):
                continue
            for inner in ast.walk(outer):
                if inner is not outer and isinstance(inner, (ast.FunctionDef, ast.AsyncFunctionDef)) and any(
                        isinstance(node, ast.Name) and node.id == inner.name for node in ast.walk(inner)):
                    found.append(f"{path.relative_to(root)}:{inner.lineno} {inner.name}")
    assert not found, f"a closure that calls itself is a reference cycle (what it holds outlives the call): {found}"
