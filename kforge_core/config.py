"""Reading settings: a config file, then ``KFORGE_*`` environment variables, then command-line flags.

Later sources win. Each source is checked on its own, so an unknown key or a wrong type is reported with the file
or variable it came from.

Environment variables name a key by its path, upper case, with ``__`` between tables:
``KFORGE_BACKEND=cuda``, ``KFORGE_HARNESS__TRIALS=3``, ``KFORGE_BACKENDS__CUDA__ARCH=sm_90a``.
``KFORGE_PLUGINS`` is not a setting: it chooses which plugins load.
"""

from __future__ import annotations

import dataclasses
import logging
import sys
import types
import typing
from pathlib import Path
from typing import Any, Mapping

from .settings import Settings
from .typed_tables import ConfigError, convert, parse_table, settable_fields

__all__ = ["ConfigError", "convert", "load_settings", "parse_table", "parse_value", "read_config_file",
           "read_environment"]

if sys.version_info >= (3, 11):
    import tomllib
else:  # pragma: no cover
    import tomli as tomllib

ENV_PREFIX = "KFORGE_"
NOT_SETTINGS = {"KFORGE_PLUGINS"}
log = logging.getLogger("kforge.config")
_warned: set[str] = set()  # unknown variables already named, so each is named once per process


# ---------------------------------------------------------------------------------------------------- sources


def read_config_file(directory: Path, explicit: Path | None = None) -> tuple[dict[str, Any], str | None]:
    """The settings table from ``explicit``, else ``kforge.toml``, else ``pyproject.toml``'s ``[tool.kforge]``."""
    candidates = [explicit] if explicit is not None else [directory / "kforge.toml", directory / "pyproject.toml"]
    for path in candidates:
        if not path.is_file():
            if explicit is not None:
                raise ConfigError(f"config file not found: {path}")
            continue
        try:
            data = tomllib.loads(path.read_text())
        except tomllib.TOMLDecodeError as exc:
            raise ConfigError(f"{path}: not valid TOML: {exc}") from None
        if path.name == "pyproject.toml" and explicit is None:
            table = data.get("tool", {}).get("kforge")
            if table is None:
                continue
            return table, f"{path} [tool.kforge]"
        return data, str(path)
    return {}, None


def _env_value(tp: Any, text: str) -> Any:
    """Interpret an environment variable's text for a field of type ``tp`` (TOML syntax for non-strings)."""
    inner = [a for a in typing.get_args(tp) if a is not type(None)]
    if typing.get_origin(tp) in (typing.Union, types.UnionType) and len(inner) == 1:
        tp = inner[0]
    if tp in (str, Path) or typing.get_origin(tp) is typing.Literal:
        return text
    if typing.get_origin(tp) is tuple and "[" not in text:
        return [part.strip() for part in text.split(",") if part.strip()]
    return parse_value(text)  # convert() reports a wrong type


def parse_value(text: str) -> Any:
    """``text`` read as a TOML value (``true``, ``3``, ``[1, 2]``, ``"x"``), or as itself when it is not one."""
    try:
        return tomllib.loads(f"v = {text}")["v"]
    except tomllib.TOMLDecodeError:
        return text


def read_environment(environ: Mapping[str, str]) -> dict[str, Any]:
    """Settings from ``KFORGE_*`` variables, as a nested table.

    A variable that names no setting (a plugin's own ``KFORGE_CUDA_CACHE``, a typo) is not an error: it is named
    in one warning and otherwise ignored. A variable that names a setting with a value of the wrong type is a
    ConfigError.
    """
    table: dict[str, Any] = {}
    for name, text in sorted(environ.items()):
        if not name.startswith(ENV_PREFIX) or name in NOT_SETTINGS:
            continue
        path = [p.lower() for p in name[len(ENV_PREFIX):].split("__")]
        if path[0] == "backends":
            # a backend's own options are checked against its options type when the backend is chosen
            if len(path) != 3:
                _unknown(name, "use KFORGE_BACKENDS__<BACKEND>__<KEY> for a backend's option")
                continue
            table.setdefault("backends", {}).setdefault(path[1], {})[path[2]] = parse_value(text)
            continue
        cls: Any = Settings
        node = table
        for depth, part in enumerate(path):
            hints = settable_fields(cls)
            if part not in hints:
                _unknown(name, f"no setting is called {'.'.join(path)!r}")
                break
            if depth == len(path) - 1:
                node[part] = _env_value(hints[part], text)
            elif dataclasses.is_dataclass(hints[part]):
                node = node.setdefault(part, {})
                cls = hints[part]
            else:
                raise ConfigError(f"environment variable {name}: {part!r} is not a table")
    return _without_empty_tables(table)


def _unknown(name: str, why: str) -> None:
    if name not in _warned:
        _warned.add(name)
        log.warning("ignoring the environment variable %s: %s", name, why)


def _without_empty_tables(table: dict[str, Any]) -> dict[str, Any]:
    return {key: _without_empty_tables(value) if isinstance(value, dict) else value for key, value in table.items()
            if not (isinstance(value, dict) and not value)}


def _merge(base: dict[str, Any], top: Mapping[str, Any]) -> dict[str, Any]:
    merged = dict(base)
    for key, value in top.items():
        if isinstance(value, Mapping) and isinstance(merged.get(key), Mapping):
            merged[key] = _merge(dict(merged[key]), value)
        else:
            merged[key] = value
    return merged


def _nest(dotted: Mapping[str, Any]) -> dict[str, Any]:
    table: dict[str, Any] = {}
    for key, value in dotted.items():
        if value is None:
            continue
        *parents, last = key.split(".")
        node = table
        for part in parents:
            node = node.setdefault(part, {})
        node[last] = value
    return table


def load_settings(
    directory: Path | None = None,
    environ: Mapping[str, str] | None = None,
    flags: Mapping[str, Any] | None = None,
    config_file: Path | None = None,
) -> Settings:
    """Settings from the config file in ``directory``, the environment, then ``flags`` (dotted keys; None skips).

    :raises ConfigError: naming the key and the file or variable it came from.
    """
    import os

    directory = Path.cwd() if directory is None else directory
    environ = os.environ if environ is None else environ
    layers: list[tuple[dict[str, Any], str]] = []
    file_table, file_name = read_config_file(directory, config_file)
    if file_name:
        layers.append((file_table, file_name))
    env_table = read_environment(environ)
    if env_table:
        for name in sorted(n for n in environ if n.startswith(ENV_PREFIX)):  # a bad value names its variable
            alone = read_environment({name: environ[name]})
            if alone:
                parse_table(Settings, alone, where="", source=f"environment variable {name}")
        layers.append((env_table, "environment"))
    flag_table = _nest(flags or {})
    if flag_table:
        layers.append((flag_table, "command line"))
    merged: dict[str, Any] = {}
    for table, source in layers:
        parse_table(Settings, table, where="", source=source)  # each source checked on its own
        merged = _merge(merged, table)
    sources = tuple(source for _, source in layers)
    settings = parse_table(Settings, merged, where="", source=", ".join(sources) or "defaults")
    return dataclasses.replace(settings, sources=sources)
