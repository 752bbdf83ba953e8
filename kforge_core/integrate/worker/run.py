"""One ``kforge integrate``, start to report, inside the worker process."""

from __future__ import annotations

from typing import Any

from ..request import IntegrateRequest
from .compare import compare, leaves
from .fidelity import judge, reference_run
from ...model_worker.device import backend_device
from ...model_worker.model_source import load_model
from .packages import load_kernels
from .swap import Captured, Match, capture_calls, swap, try_kernel
from ...model_worker.end_to_end_timing import end_to_end, paired_medians, timing_method


def integrate(request: IntegrateRequest) -> dict[str, Any]:
    import torch

    device = backend_device(request)
    device.start()
    torch.manual_seed(0)
    loaded = load_model(request.model, str(device.torch_device), request.dtype, request.prompt_tokens,
                        request.workdir, request.batch)
    model, inputs = loaded.model, loaded.inputs
    kernels = load_kernels(request.packages)
    tolerances = {dtype: (atol, rtol) for dtype, atol, rtol in request.tolerances}
    captured = capture_calls(model, inputs)
    matches, misses = _match(request, kernels, captured, tolerances)
    with torch.no_grad():
        expected = _detached(model(*inputs))
    reference = reference_run(model, inputs, request.dtype)  # before the swap: a copy of the untouched model
    swapped = swap(model, matches, kernels)
    with torch.no_grad():
        actual = [leaf.detach() for leaf in leaves(model(*inputs))]
    outputs = judge(compare(actual, expected, tolerances), actual, expected, reference)
    del reference, actual, expected  # free the outputs (the float32 ones too) before timing
    layers = [_layer_figures(m, kernels[m.kernel], captured[m.layer_class], device, request) for m in matches]
    figures = _end_to_end(model, inputs, swapped, loaded.causal_lm, device, request)
    phases = _phase_figures(model, inputs, loaded.causal_lm, swapped, matches, kernels, device, request)
    return {
        "model": loaded.description, "backend": request.backend, "device": device.hardware_name(),
        "dtype": request.dtype, "precision": request.precision,
        "tolerances": [list(t) for t in request.tolerances],
        "kernels": {name: {"loaded_with": k.loaded_with, "problem": k.metadata.get("problem", ""),
                           "kind": k.metadata.get("kind", ""),
                           "accepted_speedup": (k.metadata.get("verdict") or {}).get("best_speedup")}
                    for name, k in kernels.items()},
        "layers": layers, "not_matched": misses,
        "outputs": outputs,
        "end_to_end": figures, "phases": phases,
        "timing_method": timing_method(device, request.warmup, request.repetitions),
    }


def _match(request: IntegrateRequest, kernels: dict, captured: dict[str, Captured],
           tolerances: dict) -> tuple[list[Match], list[dict[str, str]]]:
    matches: list[Match] = []
    misses: list[dict[str, str]] = []
    if request.mappings:
        for mapping in request.mappings:
            why = _mapped_miss(mapping, kernels, captured)
            why = why or try_kernel(kernels[mapping.kernel], captured[mapping.layer], dict(mapping.aliases),
                                    tolerances)
            if why:
                misses.append({"kernel": mapping.kernel, "layer": mapping.layer, "why": why})
            else:
                matches.append(Match(mapping.layer, mapping.kernel))
        return matches, misses
    for name, kernel in kernels.items():
        tried = []
        for layer_class, call in captured.items():
            if any(m.layer_class == layer_class for m in matches):
                continue
            why = try_kernel(kernel, call, {}, tolerances)
            if not why:
                matches.append(Match(layer_class, name))
                break
            tried.append((layer_class, why))
        else:
            misses += [{"kernel": name, "layer": layer_class, "why": why} for layer_class, why in tried
                       if not why.startswith("forward takes")]
            if not tried or all(why.startswith("forward takes") for _, why in tried):
                misses.append({"kernel": name, "layer": "", "why": "no layer of the model has a forward of its arity"})
    return matches, misses


def _mapped_miss(mapping: Any, kernels: dict, captured: dict[str, Captured]) -> str:
    if mapping.kernel not in kernels:
        return f"no kernel {mapping.kernel!r} (the packages hold {', '.join(sorted(kernels)) or 'none'})"
    if mapping.layer not in captured:
        return f"no module of class {mapping.layer} ran in the model's forward"
    return ""


def _detached(value: Any) -> Any:
    return [leaf.detach().clone() for leaf in leaves(value)]


def _layer_figures(match: Match, kernel: Any, call: Captured, device: Any, request: IntegrateRequest) -> dict:
    module = call.module
    original = type(module).forward
    nothing = lambda: None  # noqa: E731
    baseline, swapped = paired_medians(
        [(nothing, lambda: original(module, *call.args, **call.kwargs)),
         (nothing, lambda: kernel.layer.forward(module, *call.args, **call.kwargs))],
        device, request.warmup, request.repetitions)
    return {"layer_class": match.layer_class, "kernel": match.kernel, "modules": match.modules,
            "original_ms": baseline, "kernel_ms": swapped, "speedup": baseline / swapped if swapped else None}


def _switches(swapped: dict[Any, Any]) -> tuple[Any, Any]:
    """(back to the untouched model, back to the kernels): each module's own forward, or the kernel's."""
    def untouched_model() -> None:
        for module in swapped:
            module.__dict__.pop("forward", None)

    def with_kernels() -> None:
        for module, forward in swapped.items():
            module.forward = forward

    return untouched_model, with_kernels


def _end_to_end(model: Any, inputs: tuple, swapped: dict[Any, Any], causal_lm: bool, device: Any,
                request: IntegrateRequest) -> dict:
    untouched_model, with_kernels = _switches(swapped)
    untouched, after = end_to_end(model, inputs, causal_lm, (untouched_model, with_kernels), device,
                                  request.warmup, request.repetitions, request.decode_tokens)
    with_kernels()
    speedups = {"forward": untouched["forward_ms"] / after["forward_ms"]}
    for phase in ("prefill", "decode"):
        if f"{phase}_tokens_per_s" in after:
            speedups[phase] = after[f"{phase}_tokens_per_s"] / untouched[f"{phase}_tokens_per_s"]
    return {"untouched": untouched, "with_kernels": after, "speedups": speedups}


def _phase_figures(model: Any, inputs: tuple, causal_lm: bool, swapped: dict[Any, Any], matches: list[Match],
                   kernels: dict, device: Any, request: IntegrateRequest) -> dict | None:
    """With ``--hotspots``: each swapped class alone and inside the model, phase by phase."""
    if request.hotspots is None or not matches:
        return None
    from ...hotspots.worker.in_model import phase_figures
    from ...hotspots.worker.phases import Driver

    untouched_model, with_kernels = _switches(swapped)
    classes = {m.layer_class: kernels[m.kernel].layer.forward for m in matches}
    return phase_figures(Driver(model, inputs, causal_lm), classes, untouched_model, with_kernels, device,
                         request.warmup, request.repetitions)
