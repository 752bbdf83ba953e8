"""A plugin extends the harness's cheat checks through two hooks: its own patterns for the static check
(``kforge_source_checks``) and its device runtime's modules for the integrity check (``kforge_device_namespaces``),
each routed to the plugin that registered the backend."""

from __future__ import annotations

import sys
import types

import pytest

from kforge_core import Backend, hookimpl
from kforge_core.harness.host.static_check import check_source
from kforge_core.harness.worker.integrity import ProcessSnapshot, changes_since
from kforge_core.plugins import PluginSelection, build_plugin_manager
from kforge_core.problem import load_problem
from kforge_core.records import Candidate, SourceCheck
from kforge_core.registry import BackendRegistry

from .helpers import write_problem

PINNING = SourceCheck(code="pinned_cache", pattern=r"\bpin_lines\b", what="the cache-pinning call")


def _plugin(name: str, checks: list[SourceCheck], namespaces: list[str]) -> object:
    backend = Backend(name=name, programming_model="PyTorch", device="cpu")

    class Plugin:
        @hookimpl
        def kforge_register_backends(self, register):
            register(backend)

        @hookimpl
        def kforge_source_checks(self, backend):
            return checks

        @hookimpl
        def kforge_device_namespaces(self, backend):
            return namespaces

    return Plugin()


@pytest.fixture
def registry():
    loaded = build_plugin_manager(PluginSelection(entry_points=False), extra_plugins=[
        ("mine", _plugin("mine", [PINNING], ["mine_runtime"])), ("other", _plugin("other", [], ["other_runtime"]))])
    return BackendRegistry(loaded)


def test_each_backend_gets_its_own_plugins_checks_and_namespaces(registry):
    mine, other = registry.get("mine").backend, registry.get("other").backend
    assert registry.hooks("mine").collect("source_checks", backend=mine) == (PINNING,)
    assert registry.hooks("other").collect("source_checks", backend=other) == ()
    assert registry.hooks("mine").collect("device_namespaces", backend=mine) == ("mine_runtime",)


def test_a_plugins_pattern_raises_a_non_blocking_source_flag(tmp_path):
    problem = load_problem(write_problem(tmp_path))
    candidate = Candidate.from_source("import rt\nrt.pin_lines(1 << 20)\n")
    assert check_source(candidate, problem) == ()  # the core alone knows no device's calls
    (flag,) = check_source(candidate, problem, plugin_checks=(PINNING,))
    assert (flag.code, flag.blocking) == ("pinned_cache", False)
    assert flag.message == "source: model_new.py names the cache-pinning call"


def test_a_source_check_validates_itself():
    with pytest.raises(ValueError, match="not a regular expression"):
        SourceCheck(code="x", pattern="(", what="y")
    with pytest.raises(ValueError, match="code"):
        SourceCheck(code="Not A Code", pattern="x", what="y")


def test_a_replaced_function_of_a_device_namespace_is_tampering(monkeypatch):
    runtime = types.ModuleType("toy_runtime_for_test")
    runtime.drain = lambda: None
    monkeypatch.setitem(sys.modules, runtime.__name__, runtime)
    watched = ProcessSnapshot.take(device_namespaces=(runtime.__name__,))
    unwatched = ProcessSnapshot.take()
    monkeypatch.setattr(runtime, "drain", lambda: "skipped")
    assert "toy_runtime_for_test.drain" in changes_since(watched).tampered
    assert "toy_runtime_for_test.drain" not in changes_since(unwatched).tampered


def test_a_workers_plugin_manager_loads_the_builtin_stages_so_their_functions_are_watched():
    """KForge's process builds its manager without the modules the built-in stages run (they import torch); a
    worker's loads them, before any candidate code, and a function of theirs replaced afterwards is tampering."""
    import subprocess

    code = (
        "import sys\n"
        "from kforge_core.plugins import PluginSelection, build_plugin_manager\n"
        "build_plugin_manager(PluginSelection(entry_points=False))\n"
        "print('torch' in sys.modules, 'kforge_core.builtin.torch_verify' in sys.modules)\n"
        "build_plugin_manager(PluginSelection(entry_points=False), in_worker=True)\n"
        "from kforge_core.harness.worker.integrity import ProcessSnapshot, changes_since\n"
        "before = ProcessSnapshot.take()\n"
        "import kforge_core.builtin.torch_verify as verify\n"
        "verify.verify_with_torch = lambda *args, **kwargs: None\n"
        "print(changes_since(before).tampered)\n"
    )
    done = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True)
    assert done.stdout.splitlines() == ["False False", "['kforge_core.builtin.torch_verify.verify_with_torch']"]
