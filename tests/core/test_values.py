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
