"""Loading and validating KernelBench-format problems.

A problem file defines ``Model(nn.Module)``, ``get_inputs()`` and ``get_init_inputs()``. Loading one runs the
reference once on the CPU, so that every mistake in it is reported here, precisely, and not later as a confusing
candidate failure.
"""

from __future__ import annotations

import importlib.util
import sys
import time
import traceback
from dataclasses import dataclass
from pathlib import Path
from types import ModuleType
from typing import Any

from .errors import KForgeError
from .records import Problem, ValueSpec
from .shapes.plan import VariantsError, shape_plan
from .shapes.probe import Probe
from .values import UnsupportedValue, describe_value, flatten_output, output_labels


class ProblemError(KForgeError):
    """A problem file that is not a valid KernelBench problem."""


def import_problem_module(path: Path, module_name: str | None = None) -> ModuleType:
    """Execute a problem file as a module (registered in ``sys.modules`` so classes pickle and inspect)."""
    path = Path(path)
    if not path.is_file():
        raise ProblemError(f"problem file not found: {path}")
    source = path.read_text()
    try:
        code = compile(source, str(path), "exec")
    except SyntaxError as exc:
        raise ProblemError(f"{path}:{exc.lineno}: syntax error: {exc.msg}") from None
    name = module_name or f"kforge_problem_{path.stem}"
    spec = importlib.util.spec_from_file_location(name, path)
    assert spec is not None
    module = importlib.util.module_from_spec(spec)
    sys.modules[name] = module
    try:
        exec(code, module.__dict__)
    except Exception as exc:
        sys.modules.pop(name, None)
        raise ProblemError(f"{path} failed to import: {_one_line(exc)}") from None
    return module


def _one_line(exc: BaseException) -> str:
    return "".join(traceback.format_exception_only(type(exc), exc)).strip().splitlines()[-1]


ACCEPTED = "a tensor, number, bool, string, None, torch.dtype, torch.Size, or a tuple, list or dict of these"


def _call_getter(module: ModuleType, path: Path, name: str) -> tuple[list[Any], tuple[ValueSpec, ...]]:
    getter = getattr(module, name, None)
    if getter is None:
        raise ProblemError(f"{path} defines no {name}()")
    if not callable(getter):
        raise ProblemError(f"{path}: {name} is not a function")
    try:
        values = getter()
    except Exception as exc:
        raise ProblemError(f"{path}: {name}() raised {_one_line(exc)}") from None
    if not isinstance(values, (list, tuple)):
        raise ProblemError(f"{path}: {name}() returned {type(values).__name__}, expected a list")
    try:
        specs = tuple(describe_value(value, f"[{i}]") for i, value in enumerate(values))
    except UnsupportedValue as exc:
        raise ProblemError(f"{path}: {name}(){exc.path} is a {type(exc.value).__name__}, expected {ACCEPTED}") \
            from None
    return list(values), specs


def as_output_tuple(output: Any) -> tuple[Any, ...]:
    """A forward's result as a tuple (one tensor becomes a 1-tuple)."""
    return tuple(output) if isinstance(output, (tuple, list)) else (output,)


def _describe_outputs(path: Path, output: Any) -> tuple[ValueSpec, ...]:
    import torch

    leaves, structure = flatten_output(output)
    for label, leaf in zip(output_labels(structure), leaves):
        if not isinstance(leaf, torch.Tensor):
            where = "Model's forward" if structure == (None,) else f"{label} of Model's forward"
            raise ProblemError(f"{path}: {where} is a {type(leaf).__name__}; outputs must be tensors "
                               "(or tuples and lists of tensors)")
    return tuple(describe_value(value) for value in as_output_tuple(output))


def load_problem(path: Path | str) -> Problem:
    """Load, validate and describe a problem; raises :class:`ProblemError` with a precise message.

    The problem is described on PyTorch's ``meta`` device first: its inputs, its model and its forward made without
    any data, which gives every shape and dtype without computing anything (a ConvTranspose3d problem's forward on
    the CPU took seconds of a bench's start, a level-1 matmul's minutes). A problem that does not run there (its
    forward reads a value, or makes tensors on a device of its own) runs on the CPU instead, and so does one that
    fails there, so that its message is the one its own inputs give. Its shape variants are declared or derived
    then (``shapes/plan.py``)."""
    import torch

    path = Path(path).resolve()
    module = import_problem_module(path)
    model_cls = getattr(module, "Model", None)
    if model_cls is None:
        raise ProblemError(f"{path} defines no Model")
    if not (isinstance(model_cls, type) and issubclass(model_cls, torch.nn.Module)):
        raise ProblemError(f"{path}: Model is not a torch.nn.Module subclass (it is a {type(model_cls).__name__})")
    made = _made_on_meta(module, model_cls, path)
    started = time.perf_counter()
    if made is None:
        made = _made_and_run(module, model_cls, path)
    try:
        shapes = shape_plan(module, Probe(module, made.model, made.init_inputs, made.inputs, made.device),
                            made.input_specs, cpu_forward_s=time.perf_counter() - started)
    except VariantsError as exc:
        raise ProblemError(f"{path}: {exc}") from None
    return Problem(
        name=path.stem,
        path=path,
        source=path.read_text(),
        inputs=made.input_specs,
        init_inputs=made.init_specs,
        outputs=made.outputs,
        parameter_count=made.parameter_count,
        shapes=shapes,
        weight_bytes=made.weight_bytes,
        forward_peak_bytes=made.forward_peak_bytes,
    )


@dataclass(frozen=True)
class _Made:
    """The problem as it was made and run to describe it: the description, and the model and inputs (kept to try
    other shapes of its inputs, ``shapes/plan.py``)."""

    init_specs: tuple[ValueSpec, ...]
    input_specs: tuple[ValueSpec, ...]
    outputs: tuple[ValueSpec, ...]
    parameter_count: int
    model: Any
    init_inputs: list[Any]
    inputs: list[Any]
    device: str
    forward_peak_bytes: int  # the most the forward's own tensors held at once (0: not known)

    @property
    def weight_bytes(self) -> int:
        """The model's parameters and buffers, in bytes (meta tensors have sizes and dtypes too)."""
        return sum(t.numel() * t.element_size() for t in (*self.model.parameters(), *self.model.buffers()))


def _made_on_meta(module: ModuleType, model_cls: type, path: Path) -> _Made | None:
    """The problem made and run on the ``meta`` device, or None where it does not run there."""
    import torch

    try:
        with torch.device("meta"):
            made = _made_and_run(module, model_cls, path, "meta")
    except Exception:  # noqa: BLE001 - the CPU run says what is wrong, if anything is
        return None
    return made


def _made_and_run(module: ModuleType, model_cls: type, path: Path, device: str = "cpu") -> _Made:
    """The inputs, model and forward made and run as they come: on the CPU, or on the device in force
    (``device``)."""
    import torch

    torch.manual_seed(0)
    init_inputs, init_specs = _call_getter(module, path, "get_init_inputs")
    inputs, input_specs = _call_getter(module, path, "get_inputs")
    try:
        model = model_cls(*init_inputs)
    except Exception as exc:
        raise ProblemError(f"{path}: Model(*get_init_inputs()) raised {_one_line(exc)}") from None
    try:
        output, forward_peak = _forward_counted(model, inputs)
    except Exception as exc:
        raise ProblemError(f"{path}: Model's forward raised {_one_line(exc)} on the problem's own inputs") from None
    return _Made(init_specs, input_specs, _describe_outputs(path, output), sum(p.numel() for p in model.parameters()),
                 model, init_inputs, inputs, device, forward_peak)


def _forward_counted(model: Any, inputs: list[Any]) -> tuple[Any, int]:
    """The forward's output, and the most bytes its own tensors held at once (``forward_peak``); where it fails
    while they are counted, it is called again as it is (0: not known), so that its own error is the one raised."""
    import torch

    from .forward_peak import ForwardPeak
    from .meta_recurrent import one_step_sequences

    counted = ForwardPeak()
    try:
        with torch.no_grad(), one_step_sequences(model), counted:
            return model(*inputs), counted.peak
    except Exception:  # noqa: BLE001 - the plain call below raises the forward's own error, if it has one
        pass
    with torch.no_grad():
        return model(*inputs), 0


def time_reference_forward(problem: Problem) -> float:
    """Seconds for one reference forward on the CPU (after one warm-up call)."""
    import torch

    module = import_problem_module(problem.path)
    torch.manual_seed(0)
    model = module.Model(*module.get_init_inputs())
    inputs = module.get_inputs()
    with torch.no_grad():
        model(*inputs)
        start = time.perf_counter()
        model(*inputs)
        return time.perf_counter() - start
