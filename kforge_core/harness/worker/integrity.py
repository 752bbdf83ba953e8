"""What a candidate may have changed in the process that evaluates it.

A snapshot taken before the candidate is imported is compared with the process after it ran: functions of the
timers, of torch, of the device's runtime (the modules its plugin names, ``kforge_device_namespaces``) and of the
harness itself (their identity and their code; for the harness and the device, what their classes hold too), the
kernels registered for the
operators the reference runs, global dispatch modes, precision switches, other global torch state, and Python
threads. A changed function or kernel is tampering (cheat 6); a changed precision switch is a precision
downgrade (cheat 7); any other change leaves the worker unclean, so it is not reused. The process's environment
variables are put back as they were (:func:`put_back_environment`): a solution that set ``TORCH_CUDA_ARCH_LIST``
changed what every later solution in the same worker built, and a build cache keyed on it missed all of them.
"""

from __future__ import annotations

import builtins
import importlib
import math
import os
import sys
import threading
import time
import types
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Callable

import torch

from .random_state import repairs

_WATCHED_MODULE_PREFIXES = ("kforge_core", "kforge_problem_")


def _watched_namespaces(device_namespaces: tuple[str, ...]) -> dict[str, Any]:
    spaces: dict[str, Any] = {
        "builtins": builtins, "time": time, "math": math, "torch": torch, "torch.Tensor": torch.Tensor,
        "torch._C.TensorBase": torch._C.TensorBase, "torch.nn.functional": torch.nn.functional,
        "torch.nn.Module": torch.nn.Module, "torch.testing": torch.testing, "torch.linalg": torch.linalg,
        "torch.special": torch.special, "torch.fft": torch.fft, "torch._C._VariableFunctions":
            torch._C._VariableFunctions, "torch._C._nn": torch._C._nn,
    }
    if hasattr(torch, "accelerator"):  # torch's device-neutral runtime API
        spaces["torch.accelerator"] = torch.accelerator
    for name in device_namespaces:
        try:
            spaces[name] = importlib.import_module(name)
        except ImportError:  # a runtime this torch build lacks
            continue
    for name, module in sys.modules.copy().items():  # one C call: another thread may import meanwhile
        if module is not None and name.startswith(_WATCHED_MODULE_PREFIXES):
            spaces[name] = module
    return spaces


def _bindings(device_namespaces: tuple[str, ...], classes: tuple[type, ...] = ()) -> dict[str, tuple[Any, Any]]:
    """``"torch.allclose" -> (the object, its code when it is a Python function)``, for the watched modules' names,
    and ``"kforge_core.devices.harness_device.HarnessDevice.start_timer" -> ...`` for what the classes the harness
    defines (and ``classes``: the device's) hold: a method replaced on a class leaves every module name as it was.

    The objects themselves are held (not their ids), so a replaced function cannot be freed and its id reused.
    """
    found: dict[str, tuple[Any, Any]] = {}
    watched = _watched_namespaces(device_namespaces)
    own = {f"{c.__module__}.{c.__qualname__}": c for c in classes}
    for space_name, space in watched.items():
        if space_name.startswith(_WATCHED_MODULE_PREFIXES):
            own.update({f"{space_name}.{name}": value for name, value in list(vars(space).items())
                        if isinstance(value, type) and value.__module__ == space_name})
    for space_name, space in [*watched.items(), *own.items()]:
        try:
            items = list(vars(space).items())
        except TypeError:
            continue
        for attr, value in items:
            if isinstance(value, (types.ModuleType, str, int, float, bool, type(None))):
                continue
            found[f"{space_name}.{attr}"] = (value, _code_of(value))
    return found


def _code_of(value: Any) -> Any:
    """The code behind a function, a method wrapper (staticmethod, classmethod) or a property's getter."""
    for inner in (value, getattr(value, "__func__", None), getattr(value, "fget", None)):
        code = getattr(inner, "__code__", None)
        if code is not None:
            return code
    return None


def _switch_readers() -> dict[str, Callable[[], Any]]:
    readers: dict[str, Callable[[], Any]] = {
        "torch.backends.cuda.matmul.allow_tf32": lambda: torch.backends.cuda.matmul.allow_tf32,
        "torch.backends.cudnn.allow_tf32": lambda: torch.backends.cudnn.allow_tf32,
        "torch.get_float32_matmul_precision()": torch.get_float32_matmul_precision,
        "torch.backends.cuda.matmul.allow_fp16_reduced_precision_reduction":
            lambda: torch.backends.cuda.matmul.allow_fp16_reduced_precision_reduction,
        "torch.backends.cuda.matmul.allow_bf16_reduced_precision_reduction":
            lambda: torch.backends.cuda.matmul.allow_bf16_reduced_precision_reduction,
        "torch.get_default_dtype()": torch.get_default_dtype,
    }
    for path in ("torch.backends.fp32_precision", "torch.backends.cuda.matmul.fp32_precision",
                 "torch.backends.cudnn.fp32_precision", "torch.backends.cudnn.conv.fp32_precision",
                 "torch.backends.cudnn.rnn.fp32_precision", "torch.backends.mkldnn.fp32_precision",
                 "torch.backends.mkldnn.matmul.fp32_precision", "torch.backends.mkldnn.conv.fp32_precision"):
        readers[path] = _attribute_reader(path)
    return readers


def _state_readers() -> dict[str, Callable[[], Any]]:
    return {
        "torch.is_grad_enabled()": torch.is_grad_enabled,
        "torch.are_deterministic_algorithms_enabled()": torch.are_deterministic_algorithms_enabled,
        "torch.get_num_threads()": torch.get_num_threads,
        "torch.backends.cudnn.enabled": lambda: torch.backends.cudnn.enabled,
        "torch.backends.cudnn.benchmark": lambda: torch.backends.cudnn.benchmark,
        "torch.backends.cudnn.deterministic": lambda: torch.backends.cudnn.deterministic,
        "torch.is_anomaly_enabled()": torch.is_anomaly_enabled,
        "torch function modes": torch._C._len_torch_function_stack,
        "torch dispatch modes": torch._C._len_torch_dispatch_stack,
        "graph captures left unfinished (the device's random generator repaired)": repairs,
    }


def _attribute_reader(path: str) -> Callable[[], Any]:
    def read() -> Any:
        value: Any = torch
        for part in path.split(".")[1:]:
            value = getattr(value, part)
        return value

    return read


def _read_all(readers: dict[str, Callable[[], Any]]) -> dict[str, Any]:
    values = {}
    for name, read in readers.items():
        try:
            values[name] = read()
        except Exception:  # a switch this torch version does not have
            continue
    return values


# Operators the harness's own checks run: a kernel registered over one of them could make a comparison lie.
HARNESS_OPS = tuple(f"aten::{name}" for name in (
    "sub", "abs", "le", "lt", "gt", "ge", "eq", "ne", "max", "min", "sum", "mul", "add", "div", "isnan", "isinf",
    "isfinite", "where", "logical_and", "logical_or", "logical_not", "bitwise_and", "bitwise_or", "bitwise_not",
    "nan_to_num", "clamp", "linalg_vector_norm", "equal", "all", "any", "argmax", "copy_", "_to_copy", "clone",
    "index", "full_like", "zeros_like", "fill_", "view", "reshape", "unravel_index", "_local_scalar_dense",
))


def _dispatch_tables(ops: list[str]) -> dict[str, str]:
    tables = {}
    for op in ops:
        try:
            tables[op] = torch._C._dispatch_dump(op)
        except Exception:
            continue
    return tables


_TORCH_DIR = Path(torch.__file__).resolve().parent


def _torch_own(value: Any) -> bool:
    code = getattr(value, "__code__", None)
    if code is None:
        return False
    try:
        return Path(code.co_filename).resolve().is_relative_to(_TORCH_DIR)
    except (OSError, ValueError):
        return False


@dataclass
class ProcessSnapshot:
    bindings: dict[str, tuple[Any, Any]]
    switches: dict[str, Any]
    state: dict[str, Any]
    dispatch: dict[str, str]
    threads: set[threading.Thread]
    device_namespaces: tuple[str, ...] = ()
    environment: dict[str, str] = field(default_factory=dict)
    classes: tuple[type, ...] = ()

    @classmethod
    def take(cls, reference_ops: list[str] = (), device_namespaces: tuple[str, ...] = (),
             classes: tuple[type, ...] = ()) -> ProcessSnapshot:
        """The process now; the kernels of the harness's operators and of ``reference_ops`` are recorded, and the
        functions of the device's ``device_namespaces`` with torch's and the harness's, and what the harness's
        classes and ``classes`` (the device's, wherever its plugin defines them) hold."""
        return cls(_bindings(device_namespaces, classes), _read_all(_switch_readers()), _read_all(_state_readers()),
                   _dispatch_tables(sorted({*HARNESS_OPS, *reference_ops})), set(threading.enumerate()),
                   tuple(device_namespaces), dict(os.environ), tuple(classes))


@dataclass
class Changes:
    tampered: list[str]  # functions or kernels replaced
    precision: list[tuple[str, Any, Any]]  # precision switches changed: (name, before, now)
    state: list[str]  # other global state changed
    threads: list[str]  # Python threads left running


def changes_since(before: ProcessSnapshot) -> Changes:
    """What differs now from ``before``. Names added since (lazy imports) are not changes."""
    now = ProcessSnapshot.take(list(before.dispatch), before.device_namespaces, before.classes)
    replaced = sorted(name for name, (value, code) in before.bindings.items()
                      if name not in now.bindings or now.bindings[name][0] is not value
                      or now.bindings[name][1] is not code)
    # torch wraps a few of its own functions when a subsystem first loads (loading torch._dynamo wraps
    # torch.manual_seed; the harness's own operator trace loads it): a replacement whose code lives in torch's
    # own files is torch's doing, not the candidate's
    by_torch = [name for name in replaced if name in now.bindings and _torch_own(now.bindings[name][0])]
    tampered = [name for name in replaced if name not in by_torch]
    tampered += [f"the kernels registered for {op}" for op, table in before.dispatch.items()
                 if now.dispatch.get(op, table) != table]
    precision = [(k, before.switches[k], now.switches.get(k)) for k in before.switches
                 if now.switches.get(k) != before.switches[k]]
    state = [f"{k}: {before.state[k]!r} -> {now.state.get(k)!r}" for k in before.state
             if now.state.get(k) != before.state[k]]
    threads = [t.name for t in now.threads - before.threads if t.is_alive()]
    return Changes(tampered, precision, state, threads)


# Set by torch itself before each library it loads (Inductor's compiled code reads it back): not the candidate's.
_TORCH_OWN_VARIABLES = ("_TORCHINDUCTOR_",)


def put_back_environment(before: dict[str, str]) -> list[str]:
    """Put the process's environment variables back as they were at ``before``; the names the candidate changed
    (added, removed or set to another value), torch's own left out."""
    changed = sorted(name for name in {*before, *os.environ} if before.get(name) != os.environ.get(name))
    for name in changed:
        if name in before:
            os.environ[name] = before[name]
        else:
            os.environ.pop(name, None)
    return [name for name in changed if not name.startswith(_TORCH_OWN_VARIABLES)]
