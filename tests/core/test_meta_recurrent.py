"""Recurrent layers on meta tensors: one time step stands for the sequence, and counts as all of them."""

from __future__ import annotations

import textwrap

import pytest
import torch

from kforge_core.meta_recurrent import one_step_sequences, repeats
from kforge_core.problem import load_problem
from kforge_core.work_count import _counter_mode, count_forward


class _Stacked(torch.nn.Module):
    def __init__(self, kind: type, batch_first: bool) -> None:
        super().__init__()
        self.first = kind(12, 16, num_layers=2, bidirectional=True, batch_first=batch_first)
        self.second = kind(32, 8, batch_first=batch_first)
        self.head = torch.nn.Linear(8, 3)

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        hidden, _ = self.first(x)
        out, _ = self.second(torch.tanh(hidden))
        return self.head(out)


def _every_step_counted(model: torch.nn.Module, x: torch.Tensor) -> dict[tuple[str, str], int]:
    """The count of the layers' own decomposition, step by step (no shortcut)."""
    counter = _counter_mode()
    with counter, torch.no_grad():
        model(x)
    totals: dict[tuple[str, str], int] = {}
    for kind, dtype, flops in counter.records:
        totals[(kind, dtype)] = totals.get((kind, dtype), 0) + flops
    return {key: flops for key, flops in totals.items() if flops}


@pytest.mark.parametrize("kind", [torch.nn.GRU, torch.nn.LSTM, torch.nn.RNN])
@pytest.mark.parametrize("batch_first", [False, True])
def test_one_step_counts_what_every_step_does(kind: type, batch_first: bool) -> None:
    with torch.device("meta"):
        model = _Stacked(kind, batch_first)
        x = torch.empty((4, 9, 12) if batch_first else (9, 4, 12))
    counted = count_forward(model, [x])
    assert {(w.kind, w.dtype): w.flops for w in counted.work} == _every_step_counted(model, x)
    assert counted.flops("matrix") > 0


@pytest.mark.parametrize("shape", [(9, 4, 12), (9, 12)])  # batched, and one sequence without a batch
def test_the_output_and_state_have_the_whole_sequences_shapes(shape: tuple[int, ...]) -> None:
    with torch.device("meta"):
        layer = torch.nn.LSTM(12, 16, num_layers=3, bidirectional=True)
        x = torch.empty(shape)
    with torch.no_grad():
        full_output, (full_h, full_c) = layer(x)
        with one_step_sequences(layer):
            output, (h, c) = layer(x)
    assert (output.shape, h.shape, c.shape) == (full_output.shape, full_h.shape, full_c.shape)
    assert output.is_meta


def test_real_tensors_run_every_step_and_the_layers_are_left_as_they_were() -> None:
    torch.manual_seed(0)
    layer = torch.nn.GRU(5, 7, batch_first=True)
    x = torch.randn(2, 6, 5)
    with torch.no_grad():
        expected, _ = layer(x)
        with one_step_sequences(layer):
            inside, _ = layer(x)
    assert torch.equal(inside, expected)
    assert "forward" not in vars(layer)
    assert repeats() == 1


class _Seen:
    """A dispatch mode that notes, for every operator, how many times it stands for itself."""

    def __init__(self) -> None:
        from torch.utils._python_dispatch import TorchDispatchMode

        seen = self.repeats = []

        class Mode(TorchDispatchMode):
            def __torch_dispatch__(self, func, types, args=(), kwargs=None):
                seen.append((func._overloadpacket.__name__, repeats()))
                return func(*args, **(kwargs or {}))

        self.mode = Mode()


def test_the_steps_operators_stand_for_every_step_and_the_rest_for_themselves() -> None:
    with torch.device("meta"):
        model, x = torch.nn.Sequential(torch.nn.Linear(3, 3), torch.nn.RNN(3, 4)), torch.empty(11, 2, 3)
    seen = _Seen()
    with one_step_sequences(model), seen.mode, torch.no_grad():
        output, _ = model(x)
    assert output.shape == (11, 2, 4)
    counts = [count for _, count in seen.repeats]
    first, last = counts.index(11), len(counts) - counts[::-1].index(11)
    assert "addmm" in [name for name, _ in seen.repeats[:first]]  # the Linear before the layer, once
    assert set(counts[:first]) == {1} and set(counts[first:last]) == {11}  # the layer's one step, for all 11
    assert [name for name, _ in seen.repeats[last:]] == ["new_empty", "permute"]  # its output, the sequence's
    assert set(counts[last:]) == {1}


def _problem(tmp_path, steps: int):
    path = tmp_path / f"gru_{steps}.py"
    path.write_text(textwrap.dedent(f"""
        import torch
        import torch.nn as nn

        class Model(nn.Module):
            def __init__(self):
                super().__init__()
                self.gru = nn.GRU(32, 64, num_layers=4, bidirectional=True)

            def forward(self, x):
                return self.gru(x)[0]

        def get_inputs():
            return [torch.rand({steps}, 2, 32)]

        def get_init_inputs():
            return []
    """))
    return path


def test_describing_a_problem_costs_the_same_however_long_its_sequences(tmp_path) -> None:
    """Step by step, 2048 steps of 4 layers in 2 directions dispatch some 500,000 operators on meta tensors."""
    dispatched = []
    for steps in (8, 2048):
        seen = _Seen()
        with seen.mode:
            problem = load_problem(_problem(tmp_path, steps))
        assert problem.outputs[0].shape == (steps, 2, 128)
        dispatched.append(len(seen.repeats))
    assert dispatched[0] == dispatched[1]
