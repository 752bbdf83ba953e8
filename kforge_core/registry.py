"""The backends the loaded plugins registered, with who registered each (and so whose stage hooks serve it)."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from .device import Device
from .errors import KForgeError
from .plugins import LoadedPlugins, require_plugin_loaded
from .records import Availability, Backend
from .routing import BackendHooks


@dataclass(frozen=True)
class RegisteredBackend:
    """A backend and the plugin that registered it."""

    backend: Backend
    plugin: str
    distribution: str
    version: str

    @property
    def name(self) -> str:
        return self.backend.name


class BackendRegistry:
    """Asks every plugin, one at a time, to register its backends, so each backend knows its provider."""

    def __init__(self, loaded: LoadedPlugins) -> None:
        self.loaded = loaded
        self._backends: dict[str, RegisteredBackend] = {}
        self._plugins: dict[str, object] = {}  # backend name -> the plugin object that registered it
        pm = loaded.pm
        plugins = [plugin for _, plugin in pm.list_name_plugin() if plugin is not None]  # registration order
        for plugin in plugins:
            others = [p for p in plugins if p is not plugin]
            call_one = pm.subset_hook_caller("kforge_register_backends", remove_plugins=others)
            call_one(register=lambda backend, _p=plugin: self._register(backend, _p))

    def _register(self, backend: Backend, plugin: object) -> None:
        if not isinstance(backend, Backend):
            raise KForgeError(
                f"plugin {self.loaded.pm.get_name(plugin)!r} registered {backend!r}, which is not a Backend"
            )
        if backend.device_class is not None and not issubclass(backend.device_class, Device):
            raise KForgeError(f"plugin {self.loaded.pm.get_name(plugin)!r} registered backend {backend.name!r} with "
                              f"device_class {backend.device_class!r}, which is not a kforge_core.device.Device")
        dist, version = self.loaded.provider(plugin)
        entry = RegisteredBackend(backend, self.loaded.pm.get_name(plugin) or "?", dist, version)
        existing = self._backends.get(backend.name)
        if existing is not None:
            raise KForgeError(
                f"backend {backend.name!r} is registered twice: by {existing.distribution} {existing.version} "
                f"(plugin {existing.plugin!r}) and by {dist} {version} (plugin {entry.plugin!r})",
                hint="uninstall one of them, or restrict loading with KFORGE_PLUGINS",
            )
        self._backends[backend.name] = entry
        self._plugins[backend.name] = plugin

    def all(self) -> list[RegisteredBackend]:
        return sorted(self._backends.values(), key=lambda b: b.name)

    def names(self) -> list[str]:
        return sorted(self._backends)

    def get(self, name: str) -> RegisteredBackend:
        """The backend called ``name``, or an error that says what is installed and what failed to load."""
        found = self._backends.get(name)
        if found is not None:
            return found
        require_plugin_loaded(self.loaded, name)
        known = ", ".join(self.names()) or "none"
        failed = self.loaded.failures
        hint = (
            "these plugins failed to load and may provide it: "
            + "; ".join(f'"{f.name}" ({f.distribution} {f.version}): {f.error}' for f in failed)
            if failed
            else "install the plugin that provides it, then check `kforge backends`"
        )
        raise KForgeError(f"unknown backend {name!r} (registered: {known})", hint=hint)

    def hooks(self, name: str) -> BackendHooks:
        """The stage hooks of backend ``name``: its own plugin's, then the core's generic ones."""
        self.get(name)
        return BackendHooks(self.loaded, self._plugins[name])

    def availability(self, name: str, options: Any = None) -> Availability:
        """Ask the backend's plugin whether ``name`` runs here; a plugin that raises is reported, not propagated."""
        backend = self.get(name).backend
        if options is None:
            options = backend.default_options()
        try:
            answer = self.hooks(name).caller("backend_availability")(backend=backend, options=options)
        except Exception as exc:  # availability is an answer, never a crash of KForge
            return Availability.no(f"availability check raised {type(exc).__name__}: {exc}")
        return answer if answer is not None else Availability.no("no plugin answered the availability check")
