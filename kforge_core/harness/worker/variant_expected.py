"""The reference's answers at the problem's shape variants. Computed only in the referee, once per problem, after
the trials' (``expected.py``).

A variant the reference itself cannot run at (it raises, runs out of memory, or returns outputs nested otherwise
than at the problem's own shape) is dropped here, with the reason: it is never a candidate's failure. The outputs
of the others are kept in host memory while they fit what the trials left of the budget, else computed again when
a candidate's call there is judged.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any

import torch

from ...tracebacks import exception_line
from ...values import flatten_output
from .host_copies import host_copy
from .reference import Trial

if TYPE_CHECKING:
    from ...devices.harness_device import HarnessDevice


@dataclass
class VariantAnswers:
    """The reference's outputs at each shape variant that it runs at, and why it does not run at the others."""

    trials: dict[str, Trial] = field(default_factory=dict)  # variant name -> its trial (its seed and inputs)
    dropped: dict[str, str] = field(default_factory=dict)  # variant name -> why the reference cannot run there
    kept: dict[str, list[torch.Tensor]] = field(default_factory=dict)  # in host memory
    model: Any = None

    def outputs(self, name: str) -> list[torch.Tensor]:
        """The reference's output leaves at variant ``name``, on the device."""
        trial = self.trials[name]
        if name in self.kept:
            return [o.to(trial.device) for o in self.kept[name]]
        with torch.no_grad():
            return [o.detach() for o in flatten_output(self.model(*trial.inputs))[0]]


def variant_answers(trials: list[Trial], model: Any, structure: tuple[Any, ...], on: HarnessDevice,
                    budget: int) -> VariantAnswers:
    """Run the reference at each variant's trial; keep outputs within ``budget`` bytes of host memory."""
    answers = VariantAnswers(model=model)
    for trial in trials:
        assert trial.variant is not None
        name = trial.variant.name
        answers.trials[name] = trial
        try:
            with torch.no_grad():
                leaves, nested = flatten_output(model(*trial.inputs))
            leaves = [o.detach() for o in leaves]
            on.synchronize()
        except Exception as exc:  # noqa: BLE001 - whatever stops the reference there drops the variant
            answers.dropped[name] = f"the reference itself fails there ({exception_line(exc)})"
            on.release_memory()
            continue
        if nested != structure:
            answers.dropped[name] = "the reference's outputs there nest otherwise than at the problem's own shape"
            continue
        size = sum(o.numel() * o.element_size() for o in leaves)
        if size <= budget:
            answers.kept[name] = [host_copy(o) for o in leaves]
            budget -= size
        del leaves
    return answers

