"""Which elements of a timed call's outputs a check compares: all of an output up to ``harness.timed_check_elements``
elements, else that many drawn from the KForge process's seed (:class:`~kforge_core.harness.protocol.CheckAnswer`).

The seed is drawn after the call returned and its outputs were copied, so a call cannot know which of its elements
will be looked at: an output that is wrong anywhere much is wrong in the sample. The candidate's worker and the
referee draw the same positions from the same seed (torch's CPU generator gives the same numbers in every process
with the same torch), each from its own output's size, so an output of another size is compared at other positions
and fails. Runs in workers only.
"""

from __future__ import annotations

from typing import Any

import torch

_MIX = 1_000_003  # a leaf's positions come from the seed and its index: two leaves never share a draw


def positions(sample_seed: int, numel: int, elements: int) -> torch.Tensor | None:
    """The flat positions compared in an output of ``numel`` elements; None: every element."""
    if numel <= elements:
        return None
    generator = torch.Generator(device="cpu")
    generator.manual_seed(sample_seed & 0x7FFF_FFFF_FFFF_FFFF)
    return torch.randint(numel, (elements,), generator=generator)


def sampled(leaves: list[Any], sample_seed: int, elements: int) -> list[Any]:
    """Each tensor leaf as its drawn elements (a flat tensor, on the leaf's device), or whole where it is small;
    anything else as it is."""
    picked = []
    for index, leaf in enumerate(leaves):
        if not isinstance(leaf, torch.Tensor):
            picked.append(leaf)
            continue
        where = positions(sample_seed * _MIX + index, leaf.numel(), elements)
        picked.append(leaf if where is None else leaf.reshape(-1)[where.to(leaf.device)])
    return picked
