"""Frozen records to JSON and back, so the store can keep lowerings, candidates, outcomes and summaries.

Only what records use is handled: dataclasses, tuples, dicts, paths, enums, optionals and plain values.
"""

from __future__ import annotations

import dataclasses
import enum
import types
import typing
from pathlib import Path
from typing import Any, TypeVar

T = TypeVar("T")


def to_jsonable(value: Any) -> Any:
    """Plain JSON data for a record (fields in declaration order; type-valued fields are left out)."""
    if dataclasses.is_dataclass(value) and not isinstance(value, type):
        return {
            f.name: to_jsonable(getattr(value, f.name))
            for f in dataclasses.fields(value)
            if not isinstance(getattr(value, f.name), type)
        }
    if isinstance(value, enum.Enum):
        return value.value
    if isinstance(value, Path):
        return str(value)
    if isinstance(value, (list, tuple)):
        return [to_jsonable(v) for v in value]
    if isinstance(value, dict):
        return {str(k): to_jsonable(v) for k, v in value.items()}
    return value


def from_jsonable(tp: Any, data: Any) -> Any:
    """Rebuild a value of type ``tp`` from :func:`to_jsonable`'s output."""
    origin, args = typing.get_origin(tp), typing.get_args(tp)
    if data is None or tp is Any:
        return data
    if origin in (typing.Union, types.UnionType):
        inner = [a for a in args if a is not type(None)]
        return from_jsonable(inner[0], data) if len(inner) == 1 else data
    if origin is tuple:
        if len(args) == 2 and args[1] is Ellipsis:
            return tuple(from_jsonable(args[0], v) for v in data)
        return tuple(from_jsonable(a, v) for a, v in zip(args, data)) if args else tuple(data)
    if origin is dict:
        return {k: from_jsonable(args[1], v) for k, v in data.items()}
    if dataclasses.is_dataclass(tp):
        return record_from_json(tp, data)
    if isinstance(tp, type) and issubclass(tp, enum.Enum):
        return tp(data)
    if tp is Path:
        return Path(data)
    if tp is float and isinstance(data, int):
        return float(data)
    return data


def record_from_json(cls: type[T], data: dict[str, Any]) -> T:
    """A dataclass ``cls`` from a dict; keys it does not know are ignored, missing ones take their defaults."""
    hints = typing.get_type_hints(cls)
    values = {
        f.name: from_jsonable(hints[f.name], data[f.name])
        for f in dataclasses.fields(cls)
        if f.init and f.name in data
    }
    return cls(**values)
