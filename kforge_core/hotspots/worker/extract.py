"""One hot group as a KernelBench problem: ``Model`` is the model's own class (imported from its installed package,
or its source carried), built from the arguments the model's module was built with and cast to the served dtype;
its ``forward`` takes the tensors the module was called with, in the order of the module's signature, and passes
the plain values as they were; ``get_inputs`` gives values of the served shapes and dtypes, and
``get_input_variants`` the module's other served shapes (another phase's call taking the same inputs), with each
shape's share of the model's time.

A key-value cache argument becomes two inputs, the keys and values the module's layer held before the call, and
the forward builds a fresh cache holding them (so a decode step's attention reads a cache of the served length).
"""

from __future__ import annotations

import inspect
import json
import pprint
import keyword
import re
from dataclasses import dataclass, field
from typing import Any

from .constructors import Built
from .inputs import expression, literal
from .source import NotExtractable, SourceGatherer, import_line, installed
from .values import CacheSnapshot


@dataclass
class Written:
    """A problem's text and the values that reproduce the captured call (in ``get_inputs``'s order)."""

    text: str
    served_inputs: list[Any]
    parameters: list[str] = field(default_factory=list)


_OUTPUT_HELPER = '''

def _tensors(value):
    """The tensors of the module's output, in order (its other values, None and caches, dropped)."""
    if isinstance(value, torch.Tensor):
        return [value]
    if hasattr(value, "to_tuple"):
        value = value.to_tuple()
    if isinstance(value, dict):
        value = list(value.values())
    if isinstance(value, (tuple, list)):
        return [leaf for item in value for leaf in _tensors(item)]
    return []
'''


@dataclass(frozen=True)
class Served:
    """Another call of the same module (same class, parameters and attributes) at another shape, in another phase
    or at another size: a shape variant of the problem, with its share of the model's time."""

    name: str
    module: Any
    args: tuple[Any, ...]
    kwargs: dict[str, Any]
    weight: float


def write_problem(module: Any, built: Built | None, args: tuple[Any, ...], kwargs: dict[str, Any], dtype: Any,
                  docstring: str, served: tuple[Served, ...] = (), weight: float = 0.0) -> Written:
    """The problem's source; raises :class:`NotExtractable` with a one-line reason. ``served``: the module's other
    served shapes, declared as its shape variants (those whose call takes the same inputs) with their weights
    beside ``weight``, the problem's own."""
    cls = type(module)
    if built is None:
        raise NotExtractable("its constructor's arguments were not seen (the module was not built by the model's "
                             "loader)")
    gatherer = SourceGatherer()
    base = gatherer.need_class(cls)
    if base == "Model":
        raise NotExtractable("its class is called Model, the name a problem's own class must have")
    init = _init(built, gatherer)
    call = _call(cls, module, args, kwargs)
    dtype_name = "dtype" if "dtype" not in init.names else "served_dtype"
    params = ", ".join([*init.names, dtype_name])
    lines = [f'"""{docstring}"""', "", "import torch", "import torch.nn as nn"]
    needs = ["import transformers"] if call.caches else []
    lines += [line for line in [*needs, *gatherer.imports, *init.imports] if line not in lines]
    lines += [f"\n\n{block.strip()}" for block in gatherer.blocks]
    lines += [_OUTPUT_HELPER, "", f"class Model({base}):",
              f'    """{cls.__name__}, as the model built it, in the served dtype."""', "",
              f"    def __init__(self, {params}):", *[f"        {line}" for line in init.body],
              f"        super().__init__({init.call})", f"        self.to({dtype_name})", "",
              f"    def forward(self, {', '.join(call.parameters)}):" if call.parameters else "    def forward(self):",
              *[f"        {line}" for line in call.body],
              f"        out = _tensors(super().forward({call.arguments}))",
              "        return out[0] if len(out) == 1 else tuple(out)", "", "",
              *init.constants,
              "def get_inputs():", f"    return [{', '.join(call.expressions)}]", "", "",
              "def get_init_inputs():", f"    return [{', '.join([*init.values, literal(dtype)])}]", "",
              *_served_shapes(cls, call, served, weight)]
    return Written("\n".join(lines), call.served, call.parameters)


def _served_shapes(cls: type, call: _Call, served: tuple[Served, ...], weight: float) -> list[str]:
    """``get_input_variants()`` holding the other served calls that take the same inputs as this one (a decode
    step's attention with its cache does not take a prefill's), each made only when it runs, and
    ``INPUT_VARIANT_WEIGHTS``: each shape's share of the model's time."""
    variants = []
    for other in served:
        try:
            again = _call(cls, other.module, other.args, other.kwargs)
        except NotExtractable:
            continue
        if again.parameters == call.parameters and again.body == call.body:
            variants.append((other, again))
    if not variants:
        return []
    lines = ["", "def get_input_variants():",
             '    """The other shapes the model serves this module at (kforge hotspots), each made when it runs."""',
             "    return {"]
    lines += [f"        {other.name!r}: lambda: [{', '.join(again.expressions)}]," for other, again in variants]
    weights = {"get_inputs": weight, **{other.name: other.weight for other, _ in variants}}
    lines += ["    }", "", "",
              f"INPUT_VARIANT_WEIGHTS = {{{', '.join(f'{k!r}: {v:.6g}' for k, v in weights.items())}}}", ""]
    return lines


@dataclass
class _Init:
    names: list[str] = field(default_factory=list)  # Model.__init__'s parameters (the dtype's added after)
    values: list[str] = field(default_factory=list)  # get_init_inputs' expressions
    body: list[str] = field(default_factory=list)  # what turns them into the class's arguments
    call: str = ""
    imports: list[str] = field(default_factory=list)
    constants: list[str] = field(default_factory=list)


def _init(built: Built, gatherer: SourceGatherer) -> _Init:
    init = _Init()
    passed = []
    for parameter in built.parameters:
        if parameter.name not in built.values:
            continue
        value = built.values[parameter.name]
        name = parameter.name
        if parameter.kind is inspect.Parameter.VAR_POSITIONAL:
            if value:
                raise NotExtractable(f"its constructor took extra positional arguments (*{name})")
            continue
        if parameter.kind is inspect.Parameter.VAR_KEYWORD and not value:
            continue
        init.names.append(name)
        if _is_config(value):
            constant = name.upper()
            init.constants += [f"{constant} = {pprint.pformat(_config_dict(value), width=116, sort_dicts=False)}",
                               "", ""]
            init.values.append(constant)
            init.imports.append(import_line(type(value), type(value).__name__))
            init.body.append(f"{name} = {type(value).__name__}.from_dict({name})")
            implementation = getattr(value, "_attn_implementation", None)
            if isinstance(implementation, str):  # how attention is computed: not in the config's dict
                init.body.append(f"{name}._attn_implementation = {implementation!r}")
        else:
            init.values.append(_init_literal(name, value))
        if parameter.kind is inspect.Parameter.VAR_KEYWORD:
            passed.append(f"**{name}")
        elif parameter.kind is inspect.Parameter.POSITIONAL_ONLY:
            passed.append(name)
        else:
            passed.append(f"{name}={name}")
    init.call = ", ".join(passed)
    return init


def _is_config(value: Any) -> bool:
    return any(c.__name__ in ("PretrainedConfig", "PreTrainedConfig") for c in type(value).__mro__) \
        and installed(type(value))


def _config_dict(config: Any) -> dict[str, Any]:
    """The values that differ from the class's defaults, through JSON (whose keys are strings, as a problem's
    values must be; the config turns ``id2label``'s back into integers)."""
    data = json.loads(json.dumps(config.to_diff_dict()))
    data.pop("transformers_version", None)
    return data


def _init_literal(name: str, value: Any) -> str:
    import torch

    if isinstance(value, torch.device):
        return "None"  # where it is built: the harness moves the problem's model to its device
    if isinstance(value, torch.dtype) or _plain(value):
        return literal(value) if not isinstance(value, (tuple, list, dict)) else repr(value)
    raise NotExtractable(f"its constructor's argument {name} is a {type(value).__name__}, which a problem's "
                         "get_init_inputs cannot hold")


def _plain(value: Any) -> bool:
    if isinstance(value, (bool, int, float, str, type(None))):
        return True
    if isinstance(value, (tuple, list)):
        return all(_plain(v) for v in value)
    if isinstance(value, dict):
        return all(isinstance(k, str) and _plain(v) for k, v in value.items())
    return False


@dataclass
class _Call:
    parameters: list[str] = field(default_factory=list)
    expressions: list[str] = field(default_factory=list)
    served: list[Any] = field(default_factory=list)
    body: list[str] = field(default_factory=list)
    arguments: str = ""
    caches: int = 0


def _call(cls: type, module: Any, args: tuple[Any, ...], kwargs: dict[str, Any]) -> _Call:
    """The forward's parameters (the tensors), the values of get_inputs, and the call of the class's forward."""
    try:
        bound = inspect.signature(cls.forward).bind(module, *args, **kwargs)
    except TypeError as exc:
        raise NotExtractable(f"its call does not bind to {cls.__name__}.forward's signature ({exc})") from None
    call = _Call()
    passed: list[str] = []
    parameters = list(inspect.signature(cls.forward).parameters.values())[1:]
    for parameter in parameters:
        if parameter.name not in bound.arguments:
            continue
        value = bound.arguments[parameter.name]
        if parameter.kind is inspect.Parameter.VAR_POSITIONAL:
            passed += [_argument(call, f"{parameter.name}_{i}", v, None) for i, v in enumerate(value)]
        elif parameter.kind is inspect.Parameter.VAR_KEYWORD:
            passed += [_argument(call, name, v, name) for name, v in value.items()]
        else:
            keyword_name = None if parameter.kind is inspect.Parameter.POSITIONAL_ONLY else parameter.name
            passed.append(_argument(call, parameter.name, value, keyword_name, module))
    call.arguments = ", ".join(passed)
    return call


def _argument(call: _Call, name: str, value: Any, keyword_name: str | None, module: Any = None) -> str:
    """Register one argument; returns how the class's forward gets it."""
    prefix = f"{keyword_name}=" if keyword_name else ""
    if isinstance(value, CacheSnapshot):
        return prefix + _cache(call, _identifier(name), value, module)
    if _holds_tensor(value):
        identifier = _identifier(name)
        call.parameters.append(identifier)
        call.expressions.append(expression(value))
        call.served.append(value)
        return prefix + identifier
    if _plain(value) or _is_dtype(value):
        return prefix + (literal(value) if not isinstance(value, (tuple, list, dict)) else repr(value))
    raise NotExtractable(f"its argument {name} is a {type(value).__name__}, which a problem's inputs cannot hold")


def _cache(call: _Call, name: str, snapshot: CacheSnapshot, module: Any) -> str:
    """A fresh cache in the forward, holding the keys and values the layer had (inputs ``NAME_keys``,
    ``NAME_values``) when it had any."""
    layer = getattr(module, "layer_idx", None)
    if layer is None:
        raise NotExtractable("it takes a key-value cache and has no layer_idx to say which layer is its own")
    config = "self.config" if hasattr(module, "config") else "None"
    call.caches += 1
    call.body.append(f"{name} = transformers.DynamicCache(config={config})")
    if snapshot.past_length:
        for part, value in (("keys", snapshot.keys), ("values", snapshot.values)):
            call.parameters.append(f"{name}_{part}")
            call.expressions.append(expression(value))
            call.served.append(value)
        call.body.append(f"{name}.update({name}_keys, {name}_values, {layer})")
    return name


def _holds_tensor(value: Any) -> bool:
    import torch

    if isinstance(value, torch.Tensor):
        return True
    if isinstance(value, (tuple, list)):
        return any(_holds_tensor(v) for v in value)
    if isinstance(value, dict):
        return any(_holds_tensor(v) for v in value.values())
    return False


def _is_dtype(value: Any) -> bool:
    import torch

    return isinstance(value, torch.dtype)


def _identifier(name: str) -> str:
    name = re.sub(r"\W", "_", name)
    return f"{name}_" if keyword.iskeyword(name) or name in ("self", "torch", "nn", "transformers") else name
