"""How an exported layer finds ModelNew's attributes on the module it replaces, and the --map syntax."""

from __future__ import annotations

import pytest
import torch

from kforge_core.export.binding import BindingError, attribute_paths
from kforge_core.integrate.request import Mapping, parse_mapping


class HFStyleNorm(torch.nn.Module):
    def __init__(self) -> None:
        super().__init__()
        self.weight = torch.nn.Parameter(torch.ones(4))
        self.variance_epsilon = 1e-6


class Block(torch.nn.Module):
    def __init__(self) -> None:
        super().__init__()
        self.ln = torch.nn.LayerNorm(4)
        self.proj = torch.nn.Linear(4, 4)


def test_same_names_synonyms_and_submodules() -> None:
    assert attribute_paths(HFStyleNorm(), {"weight": "parameter", "eps": "value"}) == {
        "weight": "weight", "eps": "variance_epsilon"}
    assert attribute_paths(torch.nn.LayerNorm(4), {"norm": "module:LayerNorm"}) == {"norm": ""}
    assert attribute_paths(Block(), {"norm": "module:LayerNorm", "linear": "module:Linear"}) == {
        "norm": "ln", "linear": "proj"}
    assert attribute_paths(Block(), {"scale": "value"}, aliases={"scale": "ln.eps"}) == {"scale": "ln.eps"}


def test_a_missing_attribute_is_named() -> None:
    with pytest.raises(BindingError, match=r"Block has no attribute for ModelNew's scale \(value\)"):
        attribute_paths(Block(), {"scale": "value"})


def test_map_syntax() -> None:
    assert parse_mapping("LlamaRMSNorm=rmsnorm") == Mapping("LlamaRMSNorm", "rmsnorm")
    assert parse_mapping("Norm=rmsnorm:eps=variance_epsilon,weight=w") == Mapping(
        "Norm", "rmsnorm", (("eps", "variance_epsilon"), ("weight", "w")))
    with pytest.raises(ValueError, match="expected Layer=kernel"):
        parse_mapping("rmsnorm")
    with pytest.raises(ValueError, match="is not attribute=path"):
        parse_mapping("Norm=rmsnorm:eps")
