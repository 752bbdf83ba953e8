"""Plugins that fail: a broken import, a duplicate backend name, an unknown backend, and restricting what loads."""

from __future__ import annotations

import json

import pytest

from kforge_core import Backend, KForgeError, hookimpl
from kforge_core.plugins import PluginSelection, build_plugin_manager
from kforge_core.registry import BackendRegistry


def test_a_broken_plugin_is_one_warning_and_the_others_keep_working(kforge):
    result = kforge("backends", "--json", plugins="testplugin,broken")
    assert result.returncode == 0, result.stderr
    assert [row["name"] for row in json.loads(result.stdout)] == ["echo"]
    warnings = [line for line in result.stderr.splitlines() if line.strip()]
    assert warnings == [
        'WARNING: Error importing plugin "broken" (kforge-brokenplugin 0.0.1): ModuleNotFoundError: '
        "No module named 'kforge_dependency_that_is_not_installed'"
    ]


def test_debug_shows_the_broken_plugins_traceback(kforge):
    result = kforge("--debug", "backends", "--json", plugins="testplugin,broken")
    assert result.returncode == 0
    assert "Traceback (most recent call last)" in result.stderr
    assert "import kforge_dependency_that_is_not_installed" in result.stderr


def test_asking_for_the_broken_plugins_backend_is_a_clear_error(kforge):
    result = kforge("backends", "broken", plugins="testplugin,broken")
    assert result.returncode == 1
    assert 'Error: Error importing plugin "broken" (kforge-brokenplugin 0.0.1): ModuleNotFoundError' in result.stderr
    assert "Traceback" not in result.stderr


def test_an_unknown_backend_names_what_is_registered(kforge):
    result = kforge("backends", "nosuch")
    assert result.returncode == 1
    assert "Error: unknown backend 'nosuch' (registered: echo)" in result.stderr


def test_two_plugins_registering_one_name_is_an_error_naming_both(kforge):
    result = kforge("backends", plugins="testplugin,dup")
    assert result.returncode == 1
    assert (
        "backend 'echo' is registered twice: by kforge-dupplugin 0.4.0 (plugin 'dup') "
        "and by kforge-testplugin 1.2.3 (plugin 'testplugin')"
    ) in result.stderr


def test_kforge_plugins_env_restricts_what_loads(kforge):
    result = kforge("plugins", plugins="dup")
    assert [p["name"] for p in json.loads(result.stdout)] == ["dup"]


def test_no_plugins_flag_loads_none(kforge):
    result = kforge("--no-plugins", "plugins", "--all", plugins=None)
    assert result.returncode == 0, result.stderr
    assert [p["name"] for p in json.loads(result.stdout)] == ["kforge.generic_stages"]
    assert "broken" not in result.stderr  # the broken plugin was never even imported


def test_a_plugin_registering_a_non_backend_is_named():
    class Sloppy:
        @hookimpl
        def kforge_register_backends(self, register):
            register({"name": "dict-backend"})

    loaded = build_plugin_manager(PluginSelection(entry_points=False), extra_plugins=[("sloppy", Sloppy())])
    with pytest.raises(KForgeError, match="plugin 'sloppy' registered .* which is not a Backend"):
        BackendRegistry(loaded)


def test_availability_that_raises_is_reported_not_propagated():
    class Flaky:
        @hookimpl
        def kforge_register_backends(self, register):
            register(Backend(name="flaky", programming_model="x", device="cpu"))

        @hookimpl
        def kforge_backend_availability(self, backend):
            raise RuntimeError("driver exploded")

    loaded = build_plugin_manager(PluginSelection(entry_points=False), extra_plugins=[("flaky", Flaky())])
    answer = BackendRegistry(loaded).availability("flaky")
    assert not answer.available
    assert answer.reason == "availability check raised RuntimeError: driver exploded"


def test_inline_plugins_register_with_the_core_as_provider():
    class Inline:
        @hookimpl
        def kforge_register_backends(self, register):
            register(Backend(name="inline", programming_model="x", device="cpu"))

    loaded = build_plugin_manager(PluginSelection(entry_points=False), extra_plugins=[("inline", Inline())])
    entry = BackendRegistry(loaded).get("inline")
    assert (entry.plugin, entry.distribution) == ("inline", "kforge-core")
