"""What a forward's own tensors hold at once, counted while a problem is described; and what it makes of a problem's
size for its device."""

from __future__ import annotations

import torch

from kforge_core.forward_peak import ForwardPeak
from kforge_core.problem import load_problem

MIB = 1 << 20


def _peak(forward, *inputs) -> int:
    counted = ForwardPeak()
    with torch.no_grad(), counted:
        forward(*inputs)
    return counted.peak


def test_an_attentions_scores_and_their_softmax_count_while_both_are_held():
    def attention(q, k, v):
        scores = q @ k.transpose(-1, -2)  # 1024 x 1024 floats: 4 MiB
        weights = torch.softmax(scores, -1)  # 4 MiB more while the scores are still held
        return weights @ v

    with torch.device("meta"):
        q, k, v = (torch.randn(1024, 64) for _ in range(3))
        assert _peak(attention, q, k, v) == 8 * MIB + 1024 * 64 * 4  # the output is made while both are held


def test_a_tensor_counts_until_the_last_tensor_over_its_storage_is_gone():
    def chain(x):
        for _ in range(10):
            x = torch.relu(x) * 2  # each step's input goes once its product is made
        return x

    with torch.device("meta"):
        assert _peak(chain, torch.randn(1024, 1024)) == 12 * MIB  # 4 MiB each: the step's input, relu's, the product


def test_views_in_place_results_and_aliases_of_the_inputs_add_nothing():
    def aliases(x):
        x.mul_(2)  # in place: the input's own storage
        y = x.transpose(0, 1)  # a view of it
        return y.contiguous()  # a copy: 4 MiB

    with torch.device("meta"):
        assert _peak(aliases, torch.randn(1024, 1024)) == 4 * MIB
        assert _peak(lambda x: x[:, :10].unsqueeze(0), torch.randn(1024, 1024)) == 0


def test_a_problem_records_what_its_forward_held_at_once_and_a_large_one_is_large_by_it(tmp_path):
    from kforge_core.harness.problem_size import LARGE_SHARE, call_peak_bytes, footprint_bytes, large_for_device

    (tmp_path / "scores.py").write_text('''
import torch


class Model(torch.nn.Module):
    def forward(self, q, k):
        return torch.softmax(q @ k.transpose(-1, -2), -1).sum(-1)


def get_inputs():
    return [torch.randn(2048, 16), torch.randn(2048, 16)]


def get_init_inputs():
    return []
''')
    problem = load_problem(tmp_path / "scores.py")
    assert problem.forward_peak_bytes == 2 * 16 * MIB  # the scores and their softmax; the sums come after
    inputs, outputs = 2 * 2048 * 16 * 4, 2048 * 4
    assert footprint_bytes(problem) == inputs + outputs  # 264 KiB: the scores are not in the footprint
    assert call_peak_bytes(problem) == inputs + problem.forward_peak_bytes
    device = int(call_peak_bytes(problem) / LARGE_SHARE) - 1  # some 512 MiB: the inputs alone would be small there
    assert large_for_device(problem, device) and not large_for_device(problem, 64 * device)


def test_a_sparse_tensor_on_the_way_is_passed_over_and_the_dense_ones_still_count():
    def through_sparse(x):
        return (x.to_sparse() * 2).to_dense() + 1  # the dense result and the sum: 16 KiB each

    assert _peak(through_sparse, torch.randn(64, 64)) == 2 * 64 * 64 * 4
