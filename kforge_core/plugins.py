"""Building the plugin manager: specs, the core's own implementations, then the installed plugins.

Nothing here runs at import time. :func:`build_plugin_manager` is called once per command (and once per worker).
"""

from __future__ import annotations

import importlib
import importlib.metadata as md
import logging
import os
import traceback
from dataclasses import dataclass, field
from typing import Iterable

import pluggy

from . import hookspecs
from .errors import KForgeError

ENTRY_POINT_GROUP = "kforge"
PLUGINS_ENV = "KFORGE_PLUGINS"
# The core's distribution: the command is `kforge` and the import `kforge_core`, but the name `kforge` on PyPI
# belongs to an unrelated project, so plugins depend on this one.
CORE_DISTRIBUTION = "kforge-core"

log = logging.getLogger("kforge")


@dataclass(frozen=True)
class PluginFailure:
    """An entry point that could not be imported."""

    name: str
    distribution: str
    version: str
    error: str
    traceback: str


@dataclass(frozen=True)
class PluginSelection:
    """Which plugins to load; it travels to worker processes so they load the same ones.

    :param entry_points: False loads no installed plugin (``kforge --no-plugins``).
    :param only: when given, only the entry points with these names (``KFORGE_PLUGINS``).
    :param modules: importable module names registered after the entry points (a test's plugin module).
    """

    entry_points: bool = True
    only: tuple[str, ...] | None = None
    modules: tuple[str, ...] = ()

    @classmethod
    def from_env(cls, *, entry_points: bool = True, modules: tuple[str, ...] = ()) -> "PluginSelection":
        only = plugins_from_env()
        return cls(entry_points, tuple(only) if only is not None else None, modules)


@dataclass
class LoadedPlugins:
    """The plugin manager with what was loaded and what failed."""

    pm: pluggy.PluginManager
    failures: list[PluginFailure] = field(default_factory=list)
    # the core's own plugins (the generic stage implementations every backend falls back to)
    builtins: list[object] = field(default_factory=list)
    # plugin object id -> (distribution, version) for plugins that came from an entry point
    provenance: dict[int, tuple[str, str]] = field(default_factory=dict)

    @property
    def hook(self) -> pluggy.HookRelay:
        return self.pm.hook

    def provider(self, plugin: object) -> tuple[str, str]:
        """(distribution, version) of a registered plugin; the core's own are ``kforge`` at its version."""
        return self.provenance.get(id(plugin), (CORE_DISTRIBUTION, _core_version()))

    def failure_for(self, name: str) -> PluginFailure | None:
        return next((f for f in self.failures if f.name == name), None)


def _core_version() -> str:
    try:
        return md.version(CORE_DISTRIBUTION)
    except md.PackageNotFoundError:
        return "0+unknown"


# The core's own implementations, registered like any third-party plugin. Named, not imported, as pytest names its
# default plugins: the manager depends on no implementation, and the generic stages (which use the worker's
# machinery) may depend on everything below the manager.
BUILTIN_PLUGINS = {"kforge.generic_stages": "kforge_core.builtin.generic_stages"}
# What the built-in stages import only when they run, in a worker (they import torch, which KForge's process never
# loads). A worker's manager loads them with the built-ins, before any candidate code: the integrity snapshot
# (``harness/worker/integrity.py``) watches the core's modules loaded when it is taken, and a module a candidate
# could import first is one whose functions it could replace before the harness ever held them.
BUILTIN_WORKER_MODULES = ("kforge_core.builtin.torch_verify",)


def _builtin_plugins() -> list[tuple[str, object]]:
    return [(name, importlib.import_module(module)) for name, module in BUILTIN_PLUGINS.items()]


def _load_builtin_worker_modules() -> None:
    for module in BUILTIN_WORKER_MODULES:
        importlib.import_module(module)


def selected_entry_points(only: Iterable[str] | None) -> list[md.EntryPoint]:
    """The ``kforge`` entry points, restricted to the names in ``only`` when given."""
    eps = sorted(md.entry_points(group=ENTRY_POINT_GROUP), key=lambda ep: ep.name)
    if only is None:
        return eps
    wanted = set(only)
    return [ep for ep in eps if ep.name in wanted]


def plugins_from_env(environ: dict[str, str] | None = None) -> list[str] | None:
    """The plugin names in ``KFORGE_PLUGINS`` (a comma list), or None when it is unset."""
    value = (os.environ if environ is None else environ).get(PLUGINS_ENV)
    if value is None:
        return None
    return [name.strip() for name in value.split(",") if name.strip()]


def build_plugin_manager(
    selection: PluginSelection = PluginSelection(),
    *,
    extra_plugins: Iterable[tuple[str, object]] = (),
    in_worker: bool = False,
) -> LoadedPlugins:
    """Build a fresh plugin manager: add the specs, register the core's own plugins (in a worker, with the modules
    their stages run), load the selected entry points (each guarded), register ``selection.modules`` and
    ``extra_plugins``, then ``check_pending()``.

    :param selection: which installed plugins and extra modules to load.
    :param extra_plugins: ``(name, plugin)`` objects registered last; they exist only in this process.
    :param in_worker: the manager is a worker's: :data:`BUILTIN_WORKER_MODULES` are loaded too.
    """
    pm = pluggy.PluginManager(hookspecs.PROJECT)
    pm.add_hookspecs(hookspecs)
    loaded = LoadedPlugins(pm)
    for name, plugin in _builtin_plugins():
        pm.register(plugin, name=name)
        loaded.builtins.append(plugin)
    if in_worker:
        _load_builtin_worker_modules()
    if selection.entry_points:
        for ep in selected_entry_points(selection.only):
            _load_entry_point(loaded, ep)
    for module_name in selection.modules:
        pm.register(importlib.import_module(module_name), name=module_name)
    for name, plugin in extra_plugins:
        pm.register(plugin, name=name)
    pm.check_pending()
    return loaded


def _load_entry_point(loaded: LoadedPlugins, ep: md.EntryPoint) -> None:
    dist = ep.dist.name if ep.dist is not None else "?"
    version = ep.dist.version if ep.dist is not None else "?"
    if loaded.pm.get_plugin(ep.name) is not None:
        return
    try:
        plugin = ep.load()
        loaded.pm.register(plugin, name=ep.name)
    except Exception as exc:  # one bad plugin never breaks the others
        failure = PluginFailure(ep.name, dist, version, f"{type(exc).__name__}: {exc}", traceback.format_exc())
        loaded.failures.append(failure)
        log.warning('Error importing plugin "%s" (%s %s): %s', ep.name, dist, version, failure.error)
        log.debug("%s", failure.traceback)
        return
    loaded.provenance[id(plugin)] = (dist, version)


def require_plugin_loaded(loaded: LoadedPlugins, name: str) -> None:
    """Raise a clear error when the user asked for something a failed plugin provides."""
    failure = loaded.failure_for(name)
    if failure is not None:
        raise KForgeError(
            f'Error importing plugin "{failure.name}" ({failure.distribution} {failure.version}): {failure.error}',
            hint="run with --debug for the traceback",
        )
