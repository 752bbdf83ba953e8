"""The compile cache's key: what a compile depends on is in it, what it does not depend on is not."""

import dataclasses
import enum

import pytest
import torch

from kforge_cute.compile_key import CompileKey, Unkeyable, argument_key, compile_key, function_name


def _key(func, *args, **overrides):
    fields = dict(source="abc", selector="", dsl_version="4.8.1", dsl_settings="arch='sm_90a';")
    fields.update(overrides)
    return compile_key(func, args, {}, **fields).digest()


def launch(x, y):
    pass


class Norm:
    def __init__(self, n):
        self.n = n

    def __call__(self, x):
        pass

    def run(self, x):
        pass


class Mode(enum.Enum):
    FAST = 1
    SAFE = 2


def test_every_field_of_the_key_changes_its_digest():
    base = CompileKey("src", "launch", "(1,)", "", "4.8.1", "arch='sm_90a';")
    digests = {base.digest()} | {dataclasses.replace(base, **{f.name: "other"}).digest()
                                 for f in dataclasses.fields(base)}
    assert len(digests) == 1 + len(dataclasses.fields(base))


def test_source_dsl_version_and_arch_are_in_the_key():
    x = torch.empty(4, 8)
    assert _key(launch, x) == _key(launch, torch.empty(4, 8))  # another tensor, same shape: same kernel
    assert _key(launch, x) != _key(launch, x, source="def")
    assert _key(launch, x) != _key(launch, x, dsl_version="4.9.0")
    assert _key(launch, x) != _key(launch, x, dsl_settings="arch='sm_100a';")
    assert _key(launch, x) != _key(launch, x, selector="[GenerateLineInfo(True)]")


def test_tensors_are_keyed_by_dtype_shape_strides_and_alignment():
    x = torch.empty(4, 8)
    assert argument_key(x) != argument_key(torch.empty(4, 9))
    assert argument_key(x) != argument_key(torch.empty(4, 8, dtype=torch.float16))
    assert argument_key(x) != argument_key(torch.empty(8, 4).t())
    assert argument_key(x) != argument_key(torch.empty(33)[1:].view(4, 8))  # 4-byte instead of 16-byte aligned


def test_scalars_containers_enums_and_types_are_keyed_by_value():
    assert argument_key(3) != argument_key(4) and argument_key(3) != argument_key(3.0)
    assert argument_key((1, (2, 3))) == argument_key((1, (2, 3))) != argument_key((1, (2, 4)))
    assert argument_key(Mode.FAST) != argument_key(Mode.SAFE)
    assert argument_key(torch.float16) != argument_key(torch.float32)
    assert argument_key({"b": 1, "a": 2}) == argument_key({"a": 2, "b": 1})


def test_a_callable_object_is_keyed_by_its_state():
    assert function_name(Norm(4)) == "Norm" and function_name(Norm(4).run) == "Norm.run"
    assert function_name(launch) == "launch"
    assert _key(Norm(4), 1) == _key(Norm(4), 1) != _key(Norm(8), 1)
    assert _key(Norm(4).run, 1) != _key(Norm(8).run, 1)


def test_values_without_a_stable_description_are_refused():
    with pytest.raises(Unkeyable, match="builtins.generator"):
        argument_key(i for i in range(3))
    with pytest.raises(Unkeyable, match="_thread.lock"):  # inside an object of the candidate's
        argument_key(Norm(__import__("threading").Lock()))
    with pytest.raises(Unkeyable, match="nested too deep"):
        deep = []
        for _ in range(10):
            deep = [deep]
        argument_key(deep)
