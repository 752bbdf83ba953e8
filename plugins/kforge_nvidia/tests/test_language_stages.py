"""Every language on NVIDIA GPUs gets the layer's three worker stages from one ``LanguageStages``, bound to its own
build routes, and registered under the hook names through its package's entry point."""

from __future__ import annotations

import pytest

from kforge_core.plugins import PluginSelection, build_plugin_manager


@pytest.mark.parametrize("language", ["cuda", "triton"])
def test_each_language_registers_the_stages_with_its_own_routes(language):
    loaded = build_plugin_manager(PluginSelection.from_env())
    plugin = loaded.pm.get_plugin(language)
    assert plugin is not None, f"the {language} plugin is not installed"
    routes = __import__(f"kforge_{language}.stages", fromlist=["build_routes"]).build_routes
    for hook, wrapper in (("kforge_compile", False), ("kforge_verify", True), ("kforge_profile", False)):
        [impl] = [i for i in getattr(loaded.pm.hook, hook).get_hookimpls() if i.plugin is plugin]
        assert impl.wrapper is wrapper
        assert impl.function.__self__.routes is routes, f"{language}'s {hook} builds with another language's routes"
