"""The plugin as KForge loads it: through its entry point, with its availability answers on this machine."""

import json

import torch
from click.testing import CliRunner

from kforge_core.app import App
from kforge_core.cli import cli
from kforge_core.hookspecs import hookimpl
from kforge_core.plugins import PluginSelection, build_plugin_manager
from kforge_core.records import Backend, ProfileResult
from kforge_core.registry import BackendRegistry
from kforge_cuda.backend import CUDA

NO_GPU = torch.version.cuda is None or not torch.cuda.is_available()


def _registry():
    return BackendRegistry(build_plugin_manager(PluginSelection(only=("cuda",))))


def test_entry_point_registers_the_cuda_backend_alone():
    registry = _registry()
    cuda = registry.get("cuda")
    assert cuda.distribution == "kforge-cuda"
    assert cuda.backend.programming_model == "CUDA C++" and cuda.backend.device == "cuda"
    assert [r.backend.name for r in registry.all()] == ["cuda"]


def test_availability_says_why_not_here():
    registry = _registry()
    cuda = registry.availability("cuda")
    if NO_GPU:
        assert not cuda.available and cuda.reason.startswith("no CUDA device")
    else:
        assert cuda.available and "sm_" in cuda.detail


def test_kforge_backends_lists_them():
    result = CliRunner().invoke(cli, ["backends", "--json"], obj=App())
    assert result.exit_code == 0, result.output
    rows = {row["name"]: row for row in json.loads(result.output)}
    assert rows["cuda"]["distribution"] == "kforge-cuda"
    assert rows["cuda"]["available"] is (not NO_GPU)
    if NO_GPU:
        assert "no CUDA device" in rows["cuda"]["reason"]


def test_hooks_leave_other_backends_and_other_profilers_alone():
    other = Backend(name="other", programming_model="X", device="cpu")

    class Other:
        @hookimpl
        def kforge_register_backends(self, register):
            register(other)

    loaded = build_plugin_manager(PluginSelection(only=("cuda",)), extra_plugins=[("other", Other())])
    pm = loaded.pm
    core = [pm.get_plugin("kforge.generic_stages")]
    routed = BackendRegistry(loaded).hooks("other")
    summarize = pm.subset_hook_caller("kforge_summarize_profile", remove_plugins=core)
    ncu_profile = ProfileResult(tool="ncu")
    assert routed.caller("backend_availability")(backend=other, options=None) is None
    assert summarize(backend=CUDA, problem=None, profile=ProfileResult(tool="torch.profiler")) is None
    assert "launched no GPU work" in summarize(backend=CUDA, problem=None, profile=ncu_profile).text
