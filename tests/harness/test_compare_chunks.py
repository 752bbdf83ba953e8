"""Outputs are compared a chunk at a time, so the comparison's temporaries stay small whatever an output's size
(the referee judges a 4 GiB output in ~100 MiB of scratch), and every figure and message is what a comparison of
the whole tensors gives: the worst element is found across chunks, NaN and Inf are counted in each."""

from __future__ import annotations

import math

import pytest
import torch
from torch.utils._python_dispatch import TorchDispatchMode

from kforge_core.harness.worker import compare
from kforge_core.harness.worker.compare import compare_outputs, max_difference, within_tolerance
from kforge_core.records import Failure

TOLERANCE = [(1e-3, 1e-3)]


class LargestAllocation(TorchDispatchMode):
    """The most elements any operator made a new tensor of (views do not count)."""

    def __init__(self) -> None:
        super().__init__()
        self.largest = 0

    def __torch_dispatch__(self, func, types, args=(), kwargs=None):
        result = func(*args, **(kwargs or {}))
        if not func.is_view:
            for value in result if isinstance(result, (tuple, list)) else [result]:
                if isinstance(value, torch.Tensor):
                    self.largest = max(self.largest, value.numel())
        return result


def _pair(shape=(40, 250)):
    generator = torch.Generator().manual_seed(0)
    reference = torch.randn(shape, generator=generator)
    return reference.clone(), reference


def _whole_and_chunked(monkeypatch, out, ref, tolerances=TOLERANCE):
    monkeypatch.setattr(compare, "CHUNK_ELEMENTS", out.numel() + 1)
    whole = compare_outputs([out], [ref], tolerances)
    monkeypatch.setattr(compare, "CHUNK_ELEMENTS", 1000)
    with LargestAllocation() as seen:
        chunked = compare_outputs([out], [ref], tolerances)
    return whole, chunked, seen.largest


def test_the_worst_element_is_found_in_a_later_chunk_and_the_first_of_equal_errors_wins(monkeypatch):
    out, ref = _pair()
    out[3, 10] += 0.5  # chunk 0
    ref[30, 7] = ref[35, 0] = 0.0
    out[30, 7] = 2.0  # chunk 7: the worst
    out[35, 0] = 2.0  # an equal error, later (chunk 8): not the one named
    whole, chunked, largest = _whole_and_chunked(monkeypatch, out, ref)
    assert chunked == whole
    assert not chunked.passed and chunked.failure is Failure.MISMATCH
    assert "3 of 10,000 elements" in chunked.message and "at [30, 7]" in chunked.message
    assert largest <= 1000


def test_nan_and_inf_are_counted_in_every_chunk(monkeypatch):
    out, ref = _pair()
    ref[0, 0] = out[0, 0] = math.nan  # NaN where the reference has one: fine
    out[5, 5] = math.nan
    out[39, 249] = math.inf
    whole, chunked, largest = _whole_and_chunked(monkeypatch, out, ref)
    assert chunked == whole
    assert chunked.failure is Failure.NAN_INF and chunked.message.startswith("1 NaN and 1 Inf values")
    assert largest <= 1000


def test_passing_outputs_give_the_same_largest_errors(monkeypatch):
    out, ref = _pair()
    out += 1e-5 * torch.arange(out.numel()).reshape(out.shape) / out.numel()
    whole, chunked, largest = _whole_and_chunked(monkeypatch, out, ref)
    assert chunked.passed and chunked == whole and chunked.max_abs_error > 0
    assert largest <= 1000


@pytest.mark.parametrize("dtype", [torch.int32, torch.bfloat16])
def test_exact_and_narrow_dtypes(monkeypatch, dtype):
    out, ref = (t.to(dtype) if dtype.is_floating_point else (t * 100).to(dtype) for t in _pair())
    out[20, 100] += 7
    whole, chunked, largest = _whole_and_chunked(monkeypatch, out, ref)
    assert chunked == whole and not chunked.passed and "at [20, 100]" in chunked.message
    assert largest <= 1000


def test_helpers_across_trials_agree_with_whole_tensors(monkeypatch):
    out, ref = _pair()
    out[33, 3] += 0.25
    monkeypatch.setattr(compare, "CHUNK_ELEMENTS", 1000)
    with LargestAllocation() as seen:
        assert max_difference([out], [ref]) == pytest.approx(0.25, rel=1e-5)
        assert not within_tolerance([out], [ref], TOLERANCE)
        assert within_tolerance([out], [ref], [(0.3, 0.0)])
    assert seen.largest <= 1000
    assert not within_tolerance([out], [ref[:20]], TOLERANCE)  # shapes that differ are never within


@pytest.mark.parametrize("case", ["passing", "mismatch", "nan_inf", "nan_in_both"])
def test_the_first_look_without_waits_passes_exactly_what_the_chunk_by_chunk_comparison_passes(case):
    """On a device a first look reads nothing back until the last chunk: it passes an output with the figures of
    the comparison a chunk at a time, and leaves anything else (a mismatch, NaN or Inf, even NaN where the
    reference has it) to that comparison, for the message."""
    out, ref = _pair()
    out += 1e-5 * torch.arange(out.numel()).reshape(out.shape) / out.numel()
    if case == "mismatch":
        out[30, 7] += 2.0
    elif case == "nan_inf":
        out[5, 5], out[39, 249] = math.nan, -math.inf
    elif case == "nan_in_both":
        ref[0, 0] = out[0, 0] = math.nan
    tally = compare._Tally()
    for start, c, r in compare.flat_chunks(out, ref, size=1000):
        tally.add(start, c, r, *TOLERANCE[0])
    looked = compare._first_look(out, ref, *TOLERANCE[0])
    if case == "passing":
        assert tally.count == 0 and looked == (tally.max_abs, tally.max_rel) and looked[0] > 0
    else:
        assert looked is None
    assert compare_outputs([out], [ref], TOLERANCE).passed == (case in ("passing", "nan_in_both"))


def test_same_bits_is_identity_of_bytes_not_closeness():
    """Input mutation and output changed after return are judged on bytes: -0.0 is not 0.0, a NaN equals itself,
    and a tensor of another dtype or shape is never the same."""
    a = torch.tensor([0.0, 1.0, math.nan])
    assert compare.same_bits(a, a.clone()) and compare.same_bits(torch.empty(0), torch.empty(0))
    assert not compare.same_bits(a, torch.tensor([-0.0, 1.0, math.nan]))
    assert not compare.same_bits(a, a.double()) and not compare.same_bits(a, a.reshape(3, 1))
    assert compare.same_bits(a[::2], torch.tensor([0.0, math.nan]))  # a strided view, compared by its values
