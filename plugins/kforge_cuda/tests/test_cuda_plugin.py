"""The plugin as KForge loads it: through its entry point, with its availability answers on this machine."""

import json
import importlib.util

import torch
from click.testing import CliRunner

from kforge_core.app import App
from kforge_core.backends import BackendRegistry
from kforge_core.cli import cli
from kforge_core.plugins import PluginSelection, build_plugin_manager
from kforge_core.records import Backend

NO_GPU = torch.version.cuda is None or not torch.cuda.is_available()


def _registry():
    return BackendRegistry(build_plugin_manager(PluginSelection(only=("cuda",))))


def test_entry_point_registers_both_backends():
    registry = _registry()
    cuda, triton = registry.get("cuda"), registry.get("triton")
    assert (cuda.distribution, triton.distribution) == ("kforge-cuda", "kforge-cuda")
    assert cuda.backend.programming_model == "CUDA C++" and triton.backend.programming_model == "Triton"
    assert cuda.backend.device == triton.backend.device == "cuda"


def test_availability_says_why_not_here():
    registry = _registry()
    cuda = registry.availability("cuda")
    triton = registry.availability("triton")
    if NO_GPU:
        assert not cuda.available and cuda.reason.startswith("no CUDA device")
        assert not triton.available
        expected = "triton not installed" if importlib.util.find_spec("triton") is None else "no CUDA device"
        assert triton.reason.startswith(expected)
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


def test_hooks_leave_other_backends_alone():
    hook = build_plugin_manager(PluginSelection(only=("cuda",))).hook
    other = Backend(name="other", programming_model="X", device="cpu")
    assert hook.kforge_backend_availability(backend=other, options=None) is None
    assert hook.kforge_summarize_profile(backend=other, problem=None, profile=None) is None
