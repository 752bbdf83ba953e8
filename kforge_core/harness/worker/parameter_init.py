"""How a candidate's parameters are initialised: KernelBench's rule first, then copies of the reference's.

1. **seeded construction**: the candidate is built under the seed the reference was built under, and nothing is
   copied (KernelBench's own eval). A candidate that creates its layers as the reference does gets the same
   weights, and whatever its constructor then does to them stays: a scale folded into a convolution, a fused
   batch norm, transposed or re-laid-out weights, extra buffers.
2. **copied from reference by name**: the same construction, then the reference's parameters and buffers copied
   wherever a name and a shape match (a candidate that keeps the reference's layers but draws its random
   numbers in another order).
3. **matched by shape order**: the same construction, then the reference's parameters paired with the
   candidate's by shape, in the order ``named_parameters()`` lists each (the same parameters, created in another
   order or under other names). Only when both have exactly the same shapes, as many of each; buffers likewise.

Verification tries them in this order on the first trial (see ``builtin/torch_verify.py``); a fallback that would leave every
value as the seeded construction made it is skipped, since it could not change the outcome.
"""

from __future__ import annotations

from collections import defaultdict
from dataclasses import dataclass
from typing import Any, Callable, Iterable

import torch

from .reference import ProblemData, build_model

SEEDED = "seeded construction"
BY_NAME = "copied from reference by name"
BY_SHAPE = "matched by shape order"


@dataclass
class Initialised:
    """A freshly built candidate model, and how its parameters were initialised."""

    model: Any
    how: str
    detail: str


def seeded(cls: type, reference: ProblemData) -> Initialised:
    model = build_model(cls, reference.init_inputs, reference.seed, reference.device)
    return Initialised(model, SEEDED, f"built under seed {reference.seed} as Model was; nothing copied")


def copied_by_name(cls: type, reference: ProblemData) -> Initialised | None:
    return _copied(cls, reference, BY_NAME, _paired_by_name, "with the same name and shape")


def matched_by_shape(cls: type, reference: ProblemData) -> Initialised | None:
    return _copied(cls, reference, BY_SHAPE, _paired_by_shape, "onto the candidate's by shape, in order")


FALLBACKS: tuple[Callable[[type, ProblemData], Initialised | None], ...] = (copied_by_name, matched_by_shape)


def _copied(cls: type, reference: ProblemData, how: str, pair: Callable[[dict[str, torch.Tensor], dict[
        str, torch.Tensor]], list[tuple[torch.Tensor, torch.Tensor]] | None], where: str) -> Initialised | None:
    """The candidate built under the seed, then the reference's parameters and buffers copied into it as ``pair``
    pairs them; None when it is no module, when ``pair`` finds no pairing of the parameters, or when no value
    changed (this initialisation would be the seeded construction again)."""
    model = build_model(cls, reference.init_inputs, reference.seed, reference.device)
    if not isinstance(model, torch.nn.Module):
        return None
    counts, changed = [], False
    for kind, theirs, ours in _tables(reference, model):
        pairs = pair(theirs, ours)
        if pairs is None:
            if kind == "parameters":
                return None
            continue
        changed = _copy(pairs) or changed
        if theirs:
            counts.append(f"{len(pairs)} of {len(theirs)} {kind}")
    if not changed:
        return None
    return Initialised(model, how, f"copied {' and '.join(counts)} {where}")


def _tables(reference: ProblemData, model: torch.nn.Module) -> list[tuple[str, dict[str, torch.Tensor],
                                                                          dict[str, torch.Tensor]]]:
    parameters, buffers = reference.fresh_state()
    return [("parameters", parameters, dict(model.named_parameters())),
            ("buffers", buffers, dict(model.named_buffers()))]


def _paired_by_name(theirs: dict[str, torch.Tensor], ours: dict[str, torch.Tensor]
                    ) -> list[tuple[torch.Tensor, torch.Tensor]]:
    """``(ours, theirs)`` pairs wherever a name and a shape match."""
    return [(ours[name], value) for name, value in theirs.items()
            if name in ours and tuple(ours[name].shape) == tuple(value.shape)]


def _paired_by_shape(theirs: dict[str, torch.Tensor], ours: dict[str, torch.Tensor]
                     ) -> list[tuple[torch.Tensor, torch.Tensor]] | None:
    """``(ours, theirs)`` pairs: the k-th tensor of each shape with the k-th of that shape, in the order the tables
    list them; None unless both sides hold exactly the same shapes, as many of each."""
    if sorted(tuple(t.shape) for t in theirs.values()) != sorted(tuple(t.shape) for t in ours.values()):
        return None
    by_shape: dict[tuple[int, ...], list[torch.Tensor]] = defaultdict(list)
    for tensor in theirs.values():
        by_shape[tuple(tensor.shape)].append(tensor)
    return [(target, by_shape[tuple(target.shape)].pop(0)) for target in ours.values()]


def _copy(pairs: Iterable[tuple[torch.Tensor, torch.Tensor]]) -> bool:
    """Copy each source into its target; True when any value changed."""
    changed = False
    with torch.no_grad():
        for target, source in pairs:
            source = source.to(target.device)
            if target.dtype != source.dtype or not torch.equal(target, source):
                changed = True
            target.copy_(source)
    return changed
