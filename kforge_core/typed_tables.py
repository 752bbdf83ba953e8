"""Typed tables: a TOML table (a config file's, or options given on the command line) turned into a settings or
options dataclass, with every unknown key and wrong type reported as a :class:`ConfigError` naming its source.
``settings.py`` (a backend's options) and ``config.py`` (the settings' sources) both use it."""

from __future__ import annotations

import dataclasses
import types
import typing
from pathlib import Path
from typing import Any, Mapping

from .errors import KForgeError


class ConfigError(KForgeError):
    """A setting that is unknown or has the wrong type."""


# --------------------------------------------------------------------------------------------- typed conversion


def _type_name(tp: Any) -> str:
    return {str: "a string", int: "an integer", float: "a number", bool: "true or false", Path: "a path"}.get(
        tp, str(tp).replace("typing.", "")
    )


def convert(tp: Any, value: Any, key: str, source: str) -> Any:
    """Convert a TOML value to the annotated type ``tp`` or raise ConfigError naming ``key`` and ``source``."""

    def fail(expected: str) -> typing.NoReturn:
        raise ConfigError(f"{source}: {key} must be {expected}, got {value!r}")

    origin = typing.get_origin(tp)
    args = typing.get_args(tp)
    if tp is Any:
        return value
    if origin in (typing.Union, types.UnionType):
        inner = [a for a in args if a is not type(None)]
        if value is None and len(inner) < len(args):
            return None
        return convert(inner[0], value, key, source) if len(inner) == 1 else value
    if origin is typing.Literal:
        if value not in args:
            fail("one of " + ", ".join(repr(a) for a in args))
        return value
    if origin is tuple:
        if not isinstance(value, (list, tuple)):
            fail("a list")
        if len(args) == 2 and args[1] is Ellipsis:
            return tuple(convert(args[0], v, f"{key}[{i}]", source) for i, v in enumerate(value))
        if len(value) != len(args):
            fail(f"a list of {len(args)} values")
        return tuple(convert(a, v, f"{key}[{i}]", source) for i, (a, v) in enumerate(zip(args, value)))
    if origin is dict:
        if not isinstance(value, Mapping):
            fail("a table")
        return {str(k): convert(args[1], v, f"{key}.{k}", source) for k, v in value.items()}
    if dataclasses.is_dataclass(tp):
        if not isinstance(value, Mapping):
            fail("a table")
        return parse_table(tp, value, where=key, source=source)
    if tp is bool:
        if not isinstance(value, bool):
            fail(_type_name(bool))
        return value
    if tp is int:
        if isinstance(value, bool) or not isinstance(value, int):
            fail(_type_name(int))
        return value
    if tp is float:
        if isinstance(value, bool) or not isinstance(value, (int, float)):
            fail(_type_name(float))
        return float(value)
    if tp is str:
        if not isinstance(value, str):
            fail(_type_name(str))
        return value
    if tp is Path:
        if not isinstance(value, (str, Path)):
            fail(_type_name(Path))
        return Path(value).expanduser()
    raise TypeError(f"settings field {key} has an unsupported type {tp!r}")


def settable_fields(cls: type) -> dict[str, Any]:
    """The fields of ``cls`` a config source may set, with their types (internal fields excluded)."""
    hints = typing.get_type_hints(cls)
    return {f.name: hints[f.name] for f in dataclasses.fields(cls) if f.init and not f.metadata.get("internal")}


def parse_table(cls: type, table: Mapping[str, Any], *, where: str, source: str) -> Any:
    """Build dataclass ``cls`` from ``table`` over its defaults; unknown keys and wrong types are ConfigErrors."""
    hints = settable_fields(cls)
    values = {}
    for key, value in table.items():
        dotted = f"{where}.{key}" if where else key
        if key not in hints:
            known = ", ".join(sorted(hints))
            raise ConfigError(f"{source}: unknown key {dotted!r}", hint=f"known keys here: {known}")
        values[key] = convert(hints[key], value, dotted, source)
    try:
        return cls(**values)
    except (ValueError, TypeError) as exc:
        raise ConfigError(f"{source}: {exc}") from None
