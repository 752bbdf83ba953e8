"""Records to JSON and back: the one codec for the run store, ``kforge eval --json``, the build-ahead child's answer
and the plugins' own files.

The rules, the same everywhere:

* a dataclass becomes an object of its fields in declaration order (fields holding a class, such as
  ``Backend.options_type``, are left out); tuples and lists become arrays, enums their value, paths strings;
* a float JSON cannot hold (NaN, an infinity) is written as ``"nan"``, ``"inf"`` or ``"-inf"``, so documents stay
  strict JSON; where a field may hold a float or a string (``KernelMetrics.metrics``), such a float is written as
  ``{"number": "nan"}``, so it cannot be read back as the string;
* reading, keys a record does not know are ignored (a newer writer's additions), missing keys take the field's
  default, and a missing key without a default is an error that names the record and the field.
"""

from __future__ import annotations

import dataclasses
import enum
import math
import types
import typing
from pathlib import Path
from typing import Any, TypeVar

T = TypeVar("T")
_NON_FINITE = {"nan": math.nan, "inf": math.inf, "-inf": -math.inf}


def to_json(value: Any, tp: Any = None) -> Any:
    """Plain JSON data for ``value`` (``tp``, its declared type, decides how a non-finite float is written)."""
    if dataclasses.is_dataclass(value) and not isinstance(value, type):
        hints = _hints(type(value))
        return {f.name: to_json(getattr(value, f.name), hints.get(f.name))
                for f in dataclasses.fields(value) if not isinstance(getattr(value, f.name), type)}
    if isinstance(value, bool) or value is None or isinstance(value, (int, str)):
        return value
    if isinstance(value, float):
        if math.isfinite(value):
            return value
        text = "nan" if math.isnan(value) else ("inf" if value > 0 else "-inf")
        return {"number": text} if _may_be_text(tp) else text
    if isinstance(value, enum.Enum):
        return value.value
    if isinstance(value, Path):
        return str(value)
    if isinstance(value, (list, tuple)):
        return [to_json(v, item) for v, item in zip(value, _item_types(tp, len(value)))]
    if isinstance(value, dict):
        inner = typing.get_args(tp)[1] if typing.get_origin(tp) is dict else None
        return {str(k): to_json(v, inner) for k, v in value.items()}
    return value


def from_json(tp: Any, data: Any) -> Any:
    """A value of type ``tp`` rebuilt from :func:`to_json`'s output."""
    origin, args = typing.get_origin(tp), typing.get_args(tp)
    if data is None or tp is Any or tp is None:
        return data
    if isinstance(data, dict) and set(data) == {"number"} and data["number"] in _NON_FINITE:
        return _NON_FINITE[data["number"]]
    if origin in (typing.Union, types.UnionType):
        inner = [a for a in args if a is not type(None)]
        if float in inner and isinstance(data, (int, float)) and not isinstance(data, bool):
            return float(data)
        return from_json(inner[0], data) if len(inner) == 1 else data
    if origin is tuple:
        if len(args) == 2 and args[1] is Ellipsis:
            return tuple(from_json(args[0], v) for v in data)
        return tuple(from_json(a, v) for a, v in zip(args, data)) if args else tuple(data)
    if origin is list:
        return [from_json(args[0] if args else Any, v) for v in data]
    if origin is dict:
        return {k: from_json(args[1], v) for k, v in data.items()}
    if dataclasses.is_dataclass(tp):
        return record_from_json(tp, data)
    if isinstance(tp, type) and issubclass(tp, enum.Enum):
        return tp(data)
    if tp is Path:
        return Path(data)
    if tp is float:
        return _NON_FINITE[data] if isinstance(data, str) else float(data)
    return data


def record_from_json(cls: type[T], data: dict[str, Any]) -> T:
    """A dataclass ``cls`` from an object written by :func:`to_json` (see the module's rules)."""
    hints = _hints(cls)
    values = {f.name: from_json(hints[f.name], data[f.name])
              for f in dataclasses.fields(cls) if f.init and f.name in data}
    missing = [f.name for f in dataclasses.fields(cls) if f.init and f.name not in data
               and f.default is dataclasses.MISSING and f.default_factory is dataclasses.MISSING]
    if missing:
        raise ValueError(f"{cls.__name__}: the JSON object has no {', '.join(missing)}")
    return cls(**values)


def _hints(cls: type) -> dict[str, Any]:
    return typing.get_type_hints(cls)


def _may_be_text(tp: Any) -> bool:
    """Whether a value declared ``tp`` may also be a string (then "nan" would read back as text)."""
    return str in typing.get_args(tp) or tp is Any


def _item_types(tp: Any, count: int) -> list[Any]:
    args = typing.get_args(tp)
    if typing.get_origin(tp) is tuple and args and not (len(args) == 2 and args[1] is Ellipsis):
        return list(args) + [None] * (count - len(args))
    item = args[0] if args else None
    return [item] * count
