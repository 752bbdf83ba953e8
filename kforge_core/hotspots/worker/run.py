"""One ``kforge hotspots``, start to report, inside the worker process: build the model (recording how each module
was built), warm it up, time each phase's step, profile the phases with the group modules' calls marked, capture
the first call of each group, and write the hot groups as problems."""

from __future__ import annotations

import re
import statistics
import traceback
from contextlib import nullcontext
from pathlib import Path
from typing import Any

from ...model_worker.model_source import is_factory, load_model
from ...model_worker.device import backend_device
from ...model_worker.end_to_end_timing import spread
from ..request import HotspotsRequest
from .constructors import Constructors, recording_constructors
from .extract import Served, write_problem
from .kinds import group_modules
from .phases import Driver
from .profile import PhaseProfile, StepSamples, measured_and_profiled, profile_phases
from .source import NotExtractable
from .timing_cpu import timing_cpu
from .tracking import Captured, GroupKey, Tracker
from .values import CacheSnapshot
from .verify import check_problem, reproduce

REST_WHY = "an operator outside the modules a kernel replaces"


class HotspotsFailure(Exception):
    """The model cannot be profiled at all: why, in one line."""


def hotspots(request: HotspotsRequest) -> dict[str, Any]:
    device = backend_device(request)
    device.start()
    driver, built, description = _load(request, device)
    groups = group_modules(driver.model, frozenset(request.extra_classes))
    for phase in driver.phases:
        try:
            driver.run(phase, max(1, request.warmup))
        except Exception as exc:  # the model does not run there: say so, once
            raise HotspotsFailure(f"the model failed in its {phase} on {device.label}: {_one_line(exc)}") from None
    device.synchronize()
    with timing_cpu(device):  # before any hook of KForge's is in the model
        steps = measured_and_profiled(driver, device, request.decode_tokens, request.profile_steps,
                                      request.repetitions)
    tracker = Tracker(groups)
    tracker.install()
    profiles = profile_phases(driver, tracker, device, request.profile_steps)
    tracker.capturing = True
    for phase in driver.phases:
        driver.run(phase, 1, lambda name, index: tracker.step(name, index, profiling=False))
    tracker.capturing = False
    tracker.remove()
    phases = _phases(profiles, steps, request)
    rows = _rows(profiles, tracker, phases)
    if request.extract_dir:
        _extract(rows, tracker, built, request, description, device)
    return {
        "model": description, "backend": request.backend, "device": device.hardware_name(),
        "device_label": device.label, "dtype": request.dtype, "batch": request.batch if driver.causal_lm else None,
        "prompt_tokens": request.prompt_tokens if driver.causal_lm else None,
        "decode_tokens": request.decode_tokens if driver.causal_lm else None, "causal_lm": driver.causal_lm,
        "profiler": "torch.profiler with " + (f"{device.profiler_activity} kernels" if device.profiler_activity
                                              else "the host operators' own time"),
        "phases": phases, "rows": rows, "groups_found": len(groups),
        "timing_method": {"device": device.label, "warmup": request.warmup, "repetitions": request.repetitions,
                          "timer": device.timer_description, "figure": "median"},
    }


def _load(request: HotspotsRequest, device: Any) -> tuple[Driver, Constructors, str]:
    import torch

    torch.manual_seed(0)
    # a transformers model is built on the device (its random initialisation there is much faster than on the
    # host); a factory builds where it means to, and load_model moves what it returns
    where = nullcontext() if is_factory(request.model) else torch.device(device.torch_device)
    try:
        with recording_constructors() as built, where:
            loaded = load_model(request.model, str(device.torch_device), request.dtype, request.prompt_tokens,
                                request.workdir, request.batch)
    except Exception as exc:  # the user's model: whatever it raises is the reason it does not load
        raise HotspotsFailure(f"the model {request.model} did not load: {_one_line(exc)}") from None
    return Driver(loaded.model, loaded.inputs, loaded.causal_lm), built, loaded.description


def _one_line(exc: BaseException) -> str:
    text = "".join(traceback.format_exception_only(type(exc), exc)).strip().splitlines()
    return (text[-1] if text else type(exc).__name__)[:300]


def _phases(profiles: dict[str, PhaseProfile], steps: dict[str, StepSamples],
            request: HotspotsRequest) -> dict[str, dict[str, Any]]:
    """Per phase: the measured step, the step as the profiler saw it alone (both medians of samples taken in turns)
    and with the group calls marked (the attribution's session, whose ranges and shapes cost host time), the
    kernels' time, the weight."""
    per_request_steps = {"prefill": 1, "decode": request.decode_tokens, "forward": 1}
    per_request = {phase: statistics.median(samples.measured) * per_request_steps[phase]
                   for phase, samples in steps.items()}
    total = sum(per_request.values())
    phases = {}
    for phase, profile in profiles.items():
        samples = steps[phase]
        step, profiled = statistics.median(samples.measured), statistics.median(samples.profiled)
        device_ms = profile.per_step_ms(profile.device_us)
        phases[phase] = {
            "steps_profiled": profile.steps, "steps_per_request": per_request_steps[phase],
            "measured_step_ms": step, "measured_spread": spread(samples.measured),
            "profiled_device_ms": device_ms, "profiled_step_ms": profiled, "profiled_spread": spread(samples.profiled),
            "operations_per_step": samples.operations, "profiler_us_per_operation": samples.own_cost_us,
            # the profiled step less the profiler's own cost, measured apart, for each operation it recorded
            "profiled_less_own_cost_ms": profiled - samples.operations * samples.own_cost_us / 1e3,
            "attributed_step_ms": profile.per_step_ms(profile.span_us),
            # how much of a real (unprofiled) step the kernels kept the device busy
            "device_busy": min(device_ms / step, 1.0) if step else None,
            "profiler_vs_measured": profiled / step if step else None,
            "weight": per_request[phase] / total if total else 1.0,
        }
    return phases


def _rows(profiles: dict[str, PhaseProfile], tracker: Tracker, phases: dict[str, dict[str, Any]]) -> list[dict]:
    """Every group and rest operator with device time, ranked by share within each phase."""
    rows = []
    for phase, profile in profiles.items():
        total = profile.device_us or 1.0
        entries = []
        for key, share in profile.groups.items():
            captured = tracker.captured.get(key)
            group = captured.group if captured is not None else None
            entries.append({
                "phase": phase, "group": key.class_name, "kind": group.kind if group else "",
                "modules": share.modules, "shapes": _served(captured) if captured else key.signature.split("|")[0],
                "calls_per_step": share.calls / profile.steps, "key": [key.phase, key.class_name, key.signature],
                **_figures(share.device_us, total, profile, phases[phase])})
        for (name, shapes), share in profile.rest.items():
            entries.append({"phase": phase, "group": name, "kind": "aten", "modules": [], "shapes": shapes,
                            "calls_per_step": share.calls / profile.steps, "key": None, "problem": None,
                            "why_not": REST_WHY, **_figures(share.device_us, total, profile, phases[phase])})
        entries.sort(key=lambda e: -e["device_ms_per_step"])
        for rank, entry in enumerate(entries, start=1):
            entry["rank"] = rank
        rows += entries
    return rows


def _figures(us: float, total: float, profile: PhaseProfile, phase: dict[str, Any]) -> dict[str, Any]:
    share = us / total
    return {"device_ms_per_step": profile.per_step_ms(us), "share": share,
            "ceiling": 1 / (1 - share) if share < 1 else None, "model_share": share * phase["weight"]}


def _served(captured: Captured) -> str:
    """The arguments as served: each tensor's dtype and shape by name, a cache by its past length."""
    import inspect

    try:
        bound = inspect.signature(type(captured.group.module).forward).bind(
            captured.group.module, *captured.args, **captured.kwargs).arguments
    except TypeError:
        bound = {f"arg{i}": v for i, v in enumerate(captured.args)} | captured.kwargs
    parts = []
    for name, value in list(bound.items())[1:]:
        if isinstance(value, dict):
            parts += [_describe(k, v) for k, v in value.items()]
        else:
            parts.append(_describe(name, value))
    return ", ".join(p for p in parts if p)


def _describe(name: str, value: Any) -> str:
    import torch

    if isinstance(value, torch.Tensor):
        return f"{name} {str(value.dtype).removeprefix('torch.')}{list(value.shape)}"
    if isinstance(value, CacheSnapshot):
        return f"{name}: a cache of {value.past_length} past positions"
    if isinstance(value, (tuple, list)) and any(isinstance(v, torch.Tensor) for v in value):
        inner = ", ".join(f"{str(v.dtype).removeprefix('torch.')}{list(v.shape)}" for v in value
                          if isinstance(v, torch.Tensor))
        return f"{name} ({inner})"
    return ""


def _extract(rows: list[dict], tracker: Tracker, built: Constructors, request: HotspotsRequest,
             description: str, device: Any) -> None:
    """Write each group over ``min_share`` of its phase as a problem; a row says which, or why not."""
    import torch

    folder = Path(request.extract_dir)
    folder.mkdir(parents=True, exist_ok=True)
    dtype = getattr(torch, request.dtype)
    taken: set[str] = set()
    for row in rows:
        if row["key"] is None:
            continue
        row["problem"], row["why_not"] = None, ""
        if row["share"] < request.min_share:
            row["why_not"] = f"under --min-share ({request.min_share:.1%} of the phase)"
            continue
        captured = tracker.captured.get(GroupKey(*row["key"]))
        if captured is None:
            row["why_not"] = "its call was not seen again when the inputs were captured"
            continue
        name = _name(row, captured, taken)
        try:
            row.update(_write(folder, name, row, captured, built, dtype, description, device, request,
                              _served_elsewhere(row, rows, tracker)))
        except NotExtractable as exc:
            row["why_not"] = str(exc)
        except Exception as exc:  # the module's own code failed on its rebuilt self: the reason, in one line
            row["why_not"] = f"its problem failed: {_one_line(exc)}"


def _served_elsewhere(row: dict, rows: list[dict], tracker: Tracker) -> tuple[Served, ...]:
    """The same module's other served calls (same class, parameters and attributes; another phase or shape), each
    named by its phase (and its shape where a phase has several) with its share of the model's time."""
    def same_module(other: dict) -> bool:
        return other["key"] is not None and other["key"] != row["key"] and other["key"][1] == row["key"][1] \
            and other["key"][2].split("|", 1)[1:] == row["key"][2].split("|", 1)[1:]

    others = [other for other in rows if same_module(other)]
    found = []
    for other in others:
        captured = tracker.captured.get(GroupKey(*other["key"]))
        if captured is None:
            continue
        alone = sum(o["phase"] == other["phase"] for o in others) == 1 and other["phase"] != row["phase"]
        name = other["phase"] if alone else f"{other['phase']} {other['shapes'][:60]}"
        found.append(Served(name, captured.group.module, captured.args, captured.kwargs, other["model_share"]))
    return tuple(found)


def _write(folder: Path, name: str, row: dict, captured: Captured, built: Constructors, dtype: Any,
           description: str, device: Any, request: HotspotsRequest, served: tuple[Served, ...] = ()
           ) -> dict[str, Any]:
    module = captured.group.module
    modules = row["modules"]
    shown = ", ".join(modules[:3]) + (f" and {len(modules) - 3} more" if len(modules) > 3 else "")
    docstring = (f"{type(module).__name__} of {description}, {row['phase']} as served: {row['shapes']}.\n\n"
                 f"Extracted by kforge hotspots: {row['share']:.1%} of the {row['phase']} phase's device time, "
                 f"{row['calls_per_step']:g} call(s) a step ({shown}).\n"
                 f"Model is the model's own class, built from the arguments the model built it with and cast to "
                 f"{request.dtype};\nget_inputs gives random values of the served shapes and dtypes (positions and "
                 "masks as served).")
    written = write_problem(module, built.of(module), captured.args, captured.kwargs, dtype, docstring, served,
                            row["model_share"])
    path = folder / f"{name}.py"
    path.write_text(written.text)
    refused = check_problem(path)
    if refused and served:  # its other served shapes are what it fails at: the problem stands without them
        written = write_problem(module, built.of(module), captured.args, captured.kwargs, dtype, docstring)
        path.write_text(written.text)
        refused = check_problem(path)
    if refused:
        path.unlink()
        raise NotExtractable(f"the problem written for it fails kforge check: {refused}")
    reproduction = reproduce(path, module, written.served_inputs, captured.outputs, device.torch_device)
    if not reproduction.ok:
        path.unlink()
        raise NotExtractable(f"its problem does not reproduce it: {reproduction.why}")
    if request.save_inputs:
        _save_inputs(folder / "captured" / f"{name}.pt", written.served_inputs, module, captured.outputs)
    return {"problem": name, "file": path.name, "max_abs_error": reproduction.max_abs_error}


def _save_inputs(path: Path, served: list[Any], module: Any, outputs: list[Any]) -> None:
    import torch

    path.parent.mkdir(parents=True, exist_ok=True)
    on_host = lambda v: v.detach().cpu() if isinstance(v, torch.Tensor) else v  # noqa: E731
    torch.save({"inputs": [_map(on_host, v) for v in served],
                "state": {k: on_host(v) for k, v in module.state_dict().items()},
                "outputs": [on_host(o) for o in outputs]}, path)


def _map(function: Any, value: Any) -> Any:
    if isinstance(value, tuple):
        return tuple(_map(function, v) for v in value)
    if isinstance(value, list):
        return [_map(function, v) for v in value]
    if isinstance(value, dict):
        return {k: _map(function, v) for k, v in value.items()}
    return function(value)


def _name(row: dict, captured: Captured, taken: set[str]) -> str:
    """``prefill_llama_rms_norm_1x128x2048``: phase, class in snake case, the first input's shape."""
    snake = re.sub(r"(?<=[a-z0-9])(?=[A-Z])|(?<=[A-Z])(?=[A-Z][a-z])", "_", row["group"]).lower()
    shape = re.search(r"\[([0-9, ]*)\]", row["shapes"])
    dims = "x".join(shape.group(1).replace(" ", "").split(",")) if shape and shape.group(1) else "scalar"
    base = re.sub(r"\W", "_", f"{row['phase']}_{snake}_{dims}")
    name, number = base, 2
    while name in taken:
        name, number = f"{base}_{number}", number + 1
    taken.add(name)
    return name
