"""Running the reference at other shapes, to see which sizes are free: on PyTorch's ``meta`` device (shapes only,
nothing computed) or, for a problem that does not run there, on the CPU. Runs in the KForge process, which may run
problem code (never candidate code)."""

from __future__ import annotations

import contextlib
import inspect
from types import ModuleType
from typing import Any

from ..records import ValueSpec
from .inputs import resized_inputs
from .symbols import leaf_shapes


class Probe:
    """The problem's model and its own inputs as they were made on ``device`` ("meta" or "cpu") to describe it, and
    the reference's outputs at any shapes of its inputs (made there too). Its own outputs are found on first use."""

    def __init__(self, module: ModuleType, model: Any, init_inputs: list[Any], inputs: list[Any],
                 device: str) -> None:
        self.module, self.model, self.init_inputs, self.device = module, model, init_inputs, device
        self.inputs = inputs
        self.shapes = leaf_shapes(inputs)
        self.labels = leaf_labels(type(model), inputs)
        self._own: tuple[list[ValueSpec], int] | None = None

    @property
    def outputs(self) -> list[ValueSpec]:
        """The reference's outputs at the problem's own inputs."""
        return self._own_run()[0]

    @property
    def own_bytes(self) -> int:
        """The bytes of one call's inputs and outputs at the problem's own shape."""
        return self._own_run()[1]

    def _own_run(self) -> tuple[list[ValueSpec], int]:
        if self._own is None:
            self._own = self.run(self.inputs)
        return self._own

    @property
    def output_shapes(self) -> list[tuple[int, ...]]:
        return [spec.shape for spec in self.outputs]

    def at(self, shapes: list[tuple[int, ...]]) -> tuple[list[ValueSpec], int]:
        """The output tensors (described) at input ``shapes``, and the bytes of one call's inputs and outputs;
        raises what the reference raises there."""
        import torch

        with torch.device(self.device):
            torch.manual_seed(0)
            inputs = resized_inputs(self.module.get_inputs, shapes)
        return self.run(inputs)

    def run(self, inputs: list[Any]) -> tuple[list[ValueSpec], int]:
        """The output tensors (described) for ``inputs``, and the bytes of the call's inputs and outputs."""
        import torch

        from ..meta_recurrent import one_step_sequences
        from ..values import describe_value, flatten_output, tensor_bytes
        from .meta_checks import checked_meta_mode

        with torch.no_grad(), one_step_sequences(self.model), (
                checked_meta_mode() if self.device == "meta" else contextlib.nullcontext()):
            leaves, _ = flatten_output(self.model(*inputs))
        if not all(isinstance(leaf, torch.Tensor) for leaf in leaves):
            raise TypeError("an output is not a tensor")
        return [describe_value(leaf) for leaf in leaves], tensor_bytes(inputs) + tensor_bytes(leaves)


def leaf_labels(model_cls: type, inputs: list[Any]) -> list[str]:
    """A name for every input tensor, from ``forward``'s parameters: ``x``, ``states[1]`` (``input 2`` where the
    signature does not say)."""
    from ..values import tensor_leaves

    try:
        names = [p.name for p in inspect.signature(model_cls.forward).parameters.values()
                 if p.kind in (p.POSITIONAL_ONLY, p.POSITIONAL_OR_KEYWORD)][1:]
    except (TypeError, ValueError):
        names = []
    labels = []
    for index, value in enumerate(inputs):
        name = names[index] if index < len(names) else f"input {index}"
        labels.extend(name + path for path, _ in tensor_leaves(value))
    return labels
