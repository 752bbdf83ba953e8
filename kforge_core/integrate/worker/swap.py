"""Which layers of a model a kernel can replace, and the swap itself.

A kernel replaces a class of module when the mapping says so (``--map``) or, without one, when it can be bound to
the class's first module (same forward arity, every attribute ModelNew reads found) and computes what that module
computes on the inputs the model gave it, under the precision contract: within its tolerances or, for a module in
float16 or bfloat16, as close to the module's own float32 run as the module itself (the rule the whole model is
held to, :mod:`.fidelity`). Every module of a matched class is then
swapped: its ``forward`` becomes the kernel layer's, bound to it (what ``kernels.kernelize`` does).
"""

from __future__ import annotations

import importlib
import inspect
import types
from dataclasses import dataclass, field
from typing import Any

from ...model_worker.outputs import leaves
from .compare import compare
from .fidelity import judge, reference_run
from .packages import LoadedKernel


@dataclass
class Captured:
    """The first module of a class the model ran, and the arguments it got."""

    name: str
    module: Any
    args: tuple[Any, ...]
    kwargs: dict[str, Any]


@dataclass
class Match:
    layer_class: str
    kernel: str
    modules: list[str] = field(default_factory=list)


def capture_calls(model: Any, inputs: tuple[Any, ...]) -> dict[str, Captured]:
    """Run the model once; for each class of its submodules, the first module called and clones of its inputs."""
    import torch

    captured: dict[str, Captured] = {}
    handles = []

    def hook(name: str):
        def record(module: Any, args: tuple[Any, ...], kwargs: dict[str, Any]) -> None:
            key = type(module).__name__
            if key not in captured:
                captured[key] = Captured(name, module, _clone(args), _clone(kwargs))
        return record

    for name, module in model.named_modules():
        if module is not model:
            handles.append(module.register_forward_pre_hook(hook(name), with_kwargs=True))
    try:
        with torch.no_grad():
            model(*inputs)
    finally:
        for handle in handles:
            handle.remove()
    return captured


def _clone(value: Any) -> Any:
    import torch

    if isinstance(value, torch.Tensor):
        return value.detach().clone()
    if isinstance(value, tuple):
        return tuple(_clone(v) for v in value)
    if isinstance(value, list):
        return [_clone(v) for v in value]
    if isinstance(value, dict):
        return {k: _clone(v) for k, v in value.items()}
    return value


def try_kernel(kernel: LoadedKernel, captured: Captured, aliases: dict[str, str],
               tolerances: dict[str, tuple[float, float]]) -> str:
    """Why ``kernel`` cannot replace ``captured.module`` ("" when it can)."""
    import torch

    module = captured.module
    arity, wanted = _arity(type(module).forward), _arity(kernel.layer.forward)
    if arity != wanted:
        return f"forward takes {arity - 1} argument(s), the kernel {wanted - 1}"
    binding = importlib.import_module(f"{kernel.package.__name__}._binding")
    binding.ALIASES[kernel.name] = aliases
    try:
        binding.attribute_paths(module, _needs(kernel), aliases)
    except AttributeError as exc:
        return str(exc)
    with torch.no_grad():
        expected = type(module).forward(module, *_clone(captured.args), **_clone(captured.kwargs))
        try:
            actual = kernel.layer.forward(module, *_clone(captured.args), **_clone(captured.kwargs))
        except Exception as exc:  # a kernel that fails on this layer's inputs does not match it
            return f"the kernel failed on its inputs: {type(exc).__name__}: {exc}"
    return layer_agreement(captured, actual, expected, tolerances)


def layer_agreement(captured: Captured, actual: Any, expected: Any,
                    tolerances: dict[str, tuple[float, float]]) -> str:
    """Why ``actual`` does not stand for ``expected``, the output of ``captured.module`` on its captured inputs (""
    when it does): the tolerances decide, and where they fail on a float16 or bfloat16 output, the distance from a
    float32 run of the module, against the module's own (rounding in another order moves a value by an ulp of a
    large intermediate, which the tolerances of a small output do not allow)."""
    result = compare(actual, expected, tolerances)
    if result.matches:
        return ""
    floating = [leaf for leaf in leaves(expected) if leaf.is_floating_point()]
    dtype = str(floating[0].dtype).removeprefix("torch.") if floating else ""
    reference = reference_run(captured.module, captured.args, dtype, captured.kwargs)  # it runs on float32 copies
    outputs = judge(result, leaves(actual), leaves(expected), reference)
    return "" if outputs["within_contract"] else f"outputs differ: {outputs['message']}"


def _arity(forward: Any) -> int:
    return len(inspect.signature(forward).parameters)


def _needs(kernel: LoadedKernel) -> dict[str, str]:
    layers = kernel.package.layers
    return getattr(layers, f"_{kernel.name.upper()}_NEEDS", {})


def swap(model: Any, matches: list[Match], kernels: dict[str, LoadedKernel]) -> dict[Any, Any]:
    """Bind each matched kernel's forward to every module of its class; returns module -> the forward it got."""
    by_class = {m.layer_class: m for m in matches}
    swapped = {}
    for name, module in model.named_modules():
        match = by_class.get(type(module).__name__)
        if match is not None and module is not model:
            module.forward = types.MethodType(kernels[match.kernel].layer.forward, module)
            swapped[module] = module.forward
            match.modules.append(name)
    return swapped
