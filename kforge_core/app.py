"""What every command needs, built on first use: settings, the plugin manager and the backend registry."""

from __future__ import annotations

import logging
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from .config import load_settings
from .plugins import LoadedPlugins, PluginSelection, build_plugin_manager
from .registry import BackendRegistry, RegisteredBackend
from .settings import Settings


@dataclass
class App:
    """One per command invocation (and one per worker): nothing is loaded until a command asks for it."""

    debug: bool = False
    load_plugins: bool = True
    config_file: Path | None = None
    plugin_modules: tuple[str, ...] = ()
    extra_plugins: tuple[tuple[str, object], ...] = ()
    _loaded: LoadedPlugins | None = field(default=None, repr=False)
    _registry: BackendRegistry | None = field(default=None, repr=False)

    def settings(self, **flags: Any) -> Settings:
        """Settings from the config file and environment, with ``flags`` (dotted keys, None skipped) on top."""
        return load_settings(flags=flags, config_file=self.config_file)

    @property
    def plugin_selection(self) -> PluginSelection:
        """The plugins this command loads; workers load the same (``extra_plugins`` stay in this process)."""
        return PluginSelection.from_env(entry_points=self.load_plugins, modules=self.plugin_modules)

    @property
    def plugins(self) -> LoadedPlugins:
        if self._loaded is None:
            self._loaded = build_plugin_manager(self.plugin_selection, extra_plugins=self.extra_plugins)
        return self._loaded

    @property
    def registry(self) -> BackendRegistry:
        if self._registry is None:
            self._registry = BackendRegistry(self.plugins)
        return self._registry

    def backend(self, name: str) -> RegisteredBackend:
        return self.registry.get(name)


def configure_logging(debug: bool) -> None:
    """One-line warnings on stderr; tracebacks of plugin failures only with --debug."""
    handler = logging.StreamHandler()
    handler.setFormatter(logging.Formatter("%(levelname)s: %(message)s"))
    logger = logging.getLogger("kforge")
    logger.handlers[:] = [handler]
    logger.setLevel(logging.DEBUG if debug else logging.INFO)
    logger.propagate = False
