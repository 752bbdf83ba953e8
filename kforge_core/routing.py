"""Stage hooks reach only the plugin that registered the backend, and the core's generic implementations.

``kforge_core.hookspecs`` declares the stage hooks ``firstresult``. Called on the whole plugin manager, the first
plugin to answer would win, whoever registered the backend; called through :class:`BackendHooks`, every other
plugin is left out (pluggy's ``subset_hook_caller``), so an implementation never needs to ask "is this my
backend?" and a plugin cannot take over a backend it did not register.
"""

from __future__ import annotations

from typing import Any, Callable

from .plugins import LoadedPlugins

STAGES = ("backend_availability", "lower", "prebuild", "compile", "verify", "profile", "summarize_profile",
          "source_checks", "device_namespaces")


class BackendHooks:
    """The stage hooks of one backend.

    :param loaded: the plugin manager and what it loaded.
    :param plugin: the plugin object that registered the backend.
    """

    def __init__(self, loaded: LoadedPlugins, plugin: object) -> None:
        self._pm = loaded.pm
        self.plugin = plugin
        kept = {id(plugin), *(id(p) for p in loaded.builtins)}
        self._others = [p for _, p in self._pm.list_name_plugin() if p is not None and id(p) not in kept]

    def caller(self, stage: str) -> Callable[..., Any]:
        """``kforge_<stage>`` restricted to the backend's plugin and the core's generic implementations; call it
        with keyword arguments, as the hook specification names them."""
        if stage not in STAGES:
            raise ValueError(f"unknown stage {stage!r} (stages: {', '.join(STAGES)})")
        return self._pm.subset_hook_caller(f"kforge_{stage}", remove_plugins=self._others)

    def collect(self, stage: str, **kwargs: Any) -> tuple[Any, ...]:
        """Every answer of ``kforge_<stage>``, a hook whose implementations each return a list, in one tuple."""
        return tuple(item for answer in self.caller(stage)(**kwargs) for item in answer or ())

    def implements(self, stage: str) -> bool:
        """Whether the backend's own plugin implements ``kforge_<stage>`` (not counting the core's)."""
        hook = getattr(self._pm.hook, f"kforge_{stage}")
        return any(impl.plugin is self.plugin for impl in hook.get_hookimpls())

    @property
    def builds_ahead(self) -> bool:
        """Whether candidates of this backend can be built ahead: its plugin implements ``kforge_prebuild``."""
        return self.implements("prebuild")
