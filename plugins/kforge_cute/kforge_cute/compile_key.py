"""The key a ``cute.compile`` result is cached under, built without compiling anything.

``cute.compile(fn, *args)`` traces ``fn`` for what its arguments fix at compile time: a tensor's element type,
alignment and layout (static extents and strides, or which are dynamic), a Python scalar's value, a ``Constexpr``,
the state of the object a ``@cute.jit`` method belongs to. The key holds exactly that, plus the candidate's source
digest (every file, so a helper module counts), the function's qualified name, the compile options, and the DSL's
version and settings that change what it compiles (the target arch among them). Values whose compile-time meaning
cannot be read off (an arbitrary object) make the call unkeyable, and it is compiled without the cache.
"""

from __future__ import annotations

import enum
import hashlib
import inspect
import sys
from dataclasses import dataclass
from typing import Any

_MAX_DEPTH = 6
# Bump when the key's layout or the stored form changes, so old entries on disk are never read.
KEY_FORMAT = "kforge-cute-1"


class Unkeyable(Exception):
    """An argument whose compile-time meaning has no stable description; the message names its type."""


@dataclass(frozen=True)
class CompileKey:
    source: str
    function: str
    arguments: str
    options: str
    dsl_version: str
    dsl_settings: str

    def digest(self) -> str:
        text = "\0".join((KEY_FORMAT, self.source, self.function, self.arguments, self.options, self.dsl_version,
                          self.dsl_settings))
        return hashlib.sha256(text.encode()).hexdigest()[:32]


def _type_name(value: Any) -> str:
    kind = type(value)
    return f"{kind.__module__}.{kind.__qualname__}"


def _torch_tensor_key(value: Any) -> tuple:
    pointer = value.data_ptr()
    alignment = next((a for a in (16, 8, 4, 2) if pointer % a == 0), 1)  # 16 bytes: the widest access
    return ("torch.Tensor", str(value.dtype), tuple(value.shape), tuple(value.stride()), value.device.type, alignment)


def argument_key(value: Any, depth: int = 0) -> Any:
    """A hashable description of what ``value`` fixes when a function is compiled for it.

    :raises Unkeyable: for a value with no such description.
    """
    if depth > _MAX_DEPTH:
        raise Unkeyable(f"{_type_name(value)} (nested too deep)")
    if value is None or isinstance(value, (bool, int, float, str, bytes)):
        return (type(value).__name__, value)
    if isinstance(value, enum.Enum):
        return ("enum", _type_name(value), value.name)
    if isinstance(value, (tuple, list)):
        return (type(value).__name__, tuple(argument_key(v, depth + 1) for v in value))
    if isinstance(value, dict):
        return ("dict", tuple(sorted((repr(k), argument_key(v, depth + 1)) for k, v in value.items())))
    if inspect.isclass(value) or inspect.isfunction(value) or inspect.isbuiltin(value):
        return ("named", getattr(value, "__module__", ""), getattr(value, "__qualname__", repr(value)))
    module = type(value).__module__
    torch = sys.modules.get("torch")
    if torch is not None and isinstance(value, torch.Tensor):
        return _torch_tensor_key(value)
    if torch is not None and isinstance(value, torch.dtype):
        return ("torch.dtype", str(value))
    cache_key = getattr(type(value), "__cache_key__", None)
    if cache_key is not None:  # the DSL's own runtime values (tensors, pointers, fake tensors, streams)
        return ("dsl", _type_name(value), repr(value.__cache_key__))
    if module.startswith("cuda.") and type(value).__name__ in ("CUstream", "cudaStream_t"):
        return ("stream", _type_name(value))  # which stream is a run-time value, not a compile-time one
    if module.startswith("cutlass") and hasattr(value, "value") and isinstance(value.value, (bool, int, float)):
        return ("numeric", _type_name(value), value.value)  # cutlass.Float32(1e-6) and the like
    if hasattr(value, "__dict__") and not module.startswith(("torch", "cuda")):
        # an object of the candidate's own (a @cute.jit method's self), or a DSL placeholder without a key of its
        # own (a fake stream): its state is what it compiles for
        return ("object", _type_name(value), argument_key(vars(value), depth + 1))
    raise Unkeyable(_type_name(value))


def function_name(func: Any) -> str:
    """The qualified name of what ``cute.compile`` is given: a function, a bound method or a callable object."""
    target = getattr(func, "__func__", None) or (func if inspect.isfunction(func) else type(func))
    return getattr(target, "__qualname__", repr(target))


def bound_state(func: Any) -> tuple:
    """The object a bound method or callable object carries: it is an argument of the compiled function too."""
    owner = getattr(func, "__self__", None)
    if owner is None and not inspect.isfunction(func) and not inspect.ismethod(func):
        owner = func
    return () if owner is None else (argument_key(owner),)


def compile_key(func: Any, args: tuple, kwargs: dict, *, source: str, selector: str, dsl_version: str,
                dsl_settings: str) -> CompileKey:
    """The key of ``cute.compile[selector](func, *args, **kwargs)``; raises :class:`Unkeyable`."""
    arguments = (bound_state(func), tuple(argument_key(a) for a in args),
                 tuple(sorted((k, argument_key(v)) for k, v in kwargs.items())))
    return CompileKey(source=source, function=function_name(func), arguments=repr(arguments), options=selector,
                      dsl_version=dsl_version, dsl_settings=dsl_settings)
