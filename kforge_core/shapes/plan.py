"""A problem's shape plan, made when it loads: the variants it declares (``get_input_variants()``, checked by
running the reference at each on meta tensors), else those KForge derives (``derive.py``)."""

from __future__ import annotations

import time
from types import ModuleType
from typing import Any

from ..records import ShapePlan, ShapeVariant, ValueSpec
from .declared import declared_entries, declared_weights, declares_variants
from .derive import derived_plan
from ..tracebacks import exception_line
from .probe import Probe

# sizes are tried only where the problem's own forward took less than this where it was described: deriving runs
# it about ten times. On the CPU (a problem that does not run on meta tensors), and on meta tensors, where most
# forwards take milliseconds but a recurrence is unrolled op by op (KernelBench's 35_LSTM: 8 s a forward there)
PROBE_LIMIT_S = {"cpu": 1.0, "meta": 2.0}


class VariantsError(ValueError):
    """A problem's declared variants are wrong (the reference fails at one, or they are not lists of inputs)."""


def shape_plan(module: ModuleType, probe: Probe, inputs: tuple[ValueSpec, ...], *, cpu_forward_s: float
               ) -> ShapePlan:
    """The variants ``module``'s problem is checked at. ``probe`` runs its reference (on meta tensors, or on the
    CPU where it does not run there); ``inputs`` describe its own inputs; ``cpu_forward_s``: how long making and
    running it took on the CPU (0 where it ran on meta tensors, whose forward is timed here: the first run in a
    process also imports PyTorch's meta kernels, seconds on a busy machine). Raises :class:`VariantsError` for
    declared variants that are wrong."""
    runs_on_meta = probe.device == "meta"
    forward_s = _timed_own_run(probe) if runs_on_meta else cpu_forward_s
    tried = forward_s <= PROBE_LIMIT_S["meta" if runs_on_meta else "cpu"]
    if declares_variants(module):
        return _declared(module, probe if tried or runs_on_meta else None)
    if not tried:
        why = ("" if runs_on_meta else "the reference does not run on meta tensors, and ")
        return ShapePlan("none", notes=(
            f"no variant derived: {why}its forward took {forward_s:.1f} s on {_place(probe)}, too long to try "
            "other sizes there; declare them with get_input_variants()",))
    try:
        return derived_plan(probe, inputs, _place(probe))
    except Exception as exc:  # noqa: BLE001 - it ran there when it was described; a model that does not twice
        return ShapePlan("none", notes=(f"no variant derived: the reference did not run again on {_place(probe)} "
                                        f"({exception_line(exc)})",))


def _timed_own_run(probe: Probe) -> float:
    """Seconds the reference's forward takes on meta tensors at its own shape (the probe keeps what it gave; a
    forward that raises there is left for the derivation to report)."""
    started = time.perf_counter()
    try:
        probe.outputs  # noqa: B018 - run once here, and kept for the derivation
    except Exception:  # noqa: BLE001 - said where the variants are derived
        return 0.0
    return time.perf_counter() - started


def _declared(module: ModuleType, probe: Probe | None) -> ShapePlan:
    from .declared import DeclaredVariantsError

    try:
        entries = declared_entries(module)
        own_weight, weights = declared_weights(module, list(entries))
    except DeclaredVariantsError as exc:
        raise VariantsError(str(exc)) from None
    variants = []
    for name, make in entries.items():
        values = _made(make, name, probe.device if probe is not None else "meta")
        outputs: list[ValueSpec] = []
        if probe is not None:
            try:
                outputs, _ = probe.run(values)
            except Exception as exc:  # noqa: BLE001 - the problem's own variant must run
                raise VariantsError(f"Model's forward raised {exception_line(exc)} at get_input_variants() variant "
                                    f"{name!r}") from None
        variants.append(ShapeVariant(name, _described(values, name), "declared", outputs=tuple(outputs),
                                     weight=weights.get(name, 0.0)))
    if probe is not None:
        notes = (f"each declared variant checked by running the reference at it on {_place(probe)}",)
    else:
        notes = ("declared variants not run here (the reference does not run on meta tensors and is slow on the "
                 "CPU): the referee runs each before judging a candidate there",)
    return ShapePlan("declared", tuple(variants), notes=notes, own_weight=own_weight)


def _place(probe: Probe) -> str:
    """Where ``probe`` runs the reference, in words."""
    return "meta tensors" if probe.device == "meta" else "the CPU"


def _made(make: Any, name: str, device: str) -> list[Any]:
    """A declared variant's inputs on ``device`` (on the CPU where they cannot be made on meta tensors)."""
    import torch

    from .declared import DeclaredVariantsError

    for device in dict.fromkeys((device, "cpu")):
        try:
            with torch.device(device):
                torch.manual_seed(0)
                return make()
        except DeclaredVariantsError as exc:
            raise VariantsError(str(exc)) from None
        except Exception as exc:  # noqa: BLE001 - tried again on the CPU, whose error is the one said
            error = exc
    raise VariantsError(f"get_input_variants() variant {name!r} raised {exception_line(error)}")


def _described(values: list[Any], name: str) -> tuple[ValueSpec, ...]:
    from ..values import UnsupportedValue, describe_value

    try:
        return tuple(describe_value(value, f"[{i}]") for i, value in enumerate(values))
    except UnsupportedValue as exc:
        raise VariantsError(f"get_input_variants() variant {name!r}{exc.path} is a {type(exc.value).__name__}, "
                            "which no problem passes") from None
