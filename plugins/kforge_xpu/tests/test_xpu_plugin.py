"""The plugin as KForge loads it, its options, and its availability answers: here, and for each reason a
machine can lack (given as a Platform, the record availability reads)."""

import json

import pytest
from click.testing import CliRunner

from kforge_core.app import App
from kforge_core.registry import BackendRegistry
from kforge_core.cli import cli
from kforge_core.plugins import PluginSelection, build_plugin_manager
from kforge_xpu.availability import Platform, xpu_availability
from kforge_xpu.backend import XpuOptions

from xpu_testing import StandInXpu


def test_entry_point_registers_the_xpu_backend():
    registry = BackendRegistry(build_plugin_manager(PluginSelection(only=("xpu",))))
    entry = registry.get("xpu")
    assert entry.distribution == "kforge-xpu"
    assert (entry.backend.programming_model, entry.backend.device) == ("Triton", "xpu")


def test_kforge_backends_says_why_not_here():
    result = CliRunner().invoke(cli, ["backends", "xpu", "--json"], obj=App())
    assert result.exit_code == 0, result.output
    (row,) = json.loads(result.output)
    here = xpu_availability(Platform.here())
    assert row["available"] is here.available
    if not here.available:
        assert row["reason"] == here.reason


def _platform(**changes) -> Platform:
    values = dict(torch_version="2.9.0+xpu", xpu=StandInXpu(), xpu_built=True, triton_version="3.5.0",
                  triton_backends=("intel",))
    values.update(changes)
    return Platform(**values)


@pytest.mark.parametrize("changes, reason", [
    ({"xpu": None}, "no torch.xpu in torch 2.9.0+xpu"),
    ({"xpu_built": False, "torch_version": "2.13.0+cpu"}, "torch 2.13.0+cpu is built without XPU support"),
    ({"xpu": StandInXpu(devices=0)}, "no Intel GPU visible to torch.xpu"),
    ({"triton_version": None}, "triton not installed"),
    ({"triton_backends": ("amd", "nvidia")}, "triton 3.5.0 has no Intel backend (it ships: amd, nvidia)"),
])
def test_availability_names_the_first_thing_missing(changes, reason):
    answer = xpu_availability(_platform(**changes))
    assert not answer.available
    assert answer.reason.startswith(reason), answer.reason


def test_availability_says_what_it_found_when_everything_is_there():
    answer = xpu_availability(_platform())
    assert answer.available
    assert answer.detail == ("Intel(R) Arc(TM) B580 Graphics, 20 Xe-cores (160 EUs), 11 GiB, driver 1.6.33578+13, "
                             "triton 3.5.0")


def test_a_device_count_that_raises_is_an_answer():
    class Broken(StandInXpu):
        def device_count(self):
            raise RuntimeError("zeInit failed")

    answer = xpu_availability(_platform(xpu=Broken()))
    assert not answer.available and "zeInit failed" in answer.reason


def test_platform_here_finds_the_installed_triton_backends():
    import importlib.util

    here = Platform.here()
    if importlib.util.find_spec("triton") is None:
        assert here.triton_version is None and here.triton_backends == ()
    else:
        assert here.triton_version and here.triton_backends  # a Triton wheel ships at least one backend


@pytest.mark.parametrize("field, value", [("metric_group", "Compute Basic"), ("profile_calls", 0),
                                          ("tool_timeout_s", 0)])
def test_options_refuse_what_cannot_work(field, value):
    with pytest.raises(ValueError, match=field):
        XpuOptions(**{field: value})


def test_the_backend_s_stages_are_this_plugin_s():
    hooks = BackendRegistry(build_plugin_manager(PluginSelection(only=("xpu",)))).hooks("xpu")
    for stage in ("backend_availability", "lower", "compile", "profile", "summarize_profile"):
        assert hooks.implements(stage), stage
    assert not hooks.implements("verify")  # the core's generic verification, through XpuDevice
    assert not hooks.builds_ahead  # Triton builds on the first call: nothing to build ahead
