"""The metal backend says exactly why it cannot run: not macOS, no MPS device, a torch without compile_shader."""

from __future__ import annotations

import json

from click.testing import CliRunner

from kforge_core.app import App
from kforge_core.cli import cli
from kforge_core.store import RunStore
from kforge_metal.availability import Platform, this_platform, unavailable_reason

MAC = Platform(system="Darwin", machine="arm64", torch_version="2.7.0", mps_built=True, mps_available=True,
               compile_shader=True)


def test_each_obstacle_is_named():
    import dataclasses

    assert unavailable_reason(MAC) is None
    assert unavailable_reason(dataclasses.replace(MAC, system="Linux")) == (
        "needs macOS on Apple silicon (this machine runs Linux)")
    assert unavailable_reason(dataclasses.replace(MAC, mps_built=False)) == (
        "no MPS device: this torch 2.7.0 is built without MPS support")
    assert "torch.backends.mps.is_available() is False" in unavailable_reason(
        dataclasses.replace(MAC, mps_available=False))
    old = dataclasses.replace(MAC, torch_version="2.5.1", compile_shader=False)
    assert unavailable_reason(old) == ("torch 2.5.1 has no torch.mps.compile_shader: install PyTorch 2.7 or later "
                                       "(2.6 has it only as the private torch.mps._compile_shader)")


def test_this_linux_machine_gets_the_macos_reason_from_kforge_backends():
    import platform

    assert this_platform().system == platform.system() == "Linux"
    result = CliRunner().invoke(cli, ["backends", "metal", "--json"], obj=App())
    assert result.exit_code == 0, result.output
    (entry,) = json.loads(result.stdout)  # a plugin that fails to load warns on stderr
    assert (entry["distribution"], entry["device"], entry["available"]) == ("kforge-metal", "mps", False)
    assert entry["reason"] == "needs macOS on Apple silicon (this machine runs Linux)"


def test_kforge_run_on_metal_stops_before_it_starts_saying_why(tmp_path, small_problem):
    script = tmp_path / "s.jsonl"
    script.write_text('{"reply": "unused"}\n')
    result = CliRunner().invoke(cli, ["run", str(small_problem.path), "--backend", "metal", "--llm",
                                      f"replay:{script}", "--runs-dir", str(tmp_path / "runs")], obj=App())
    assert result.exit_code == 1
    assert "backend 'metal' is not available here: needs macOS on Apple silicon" in result.output
    with RunStore(tmp_path / "runs") as store:
        assert store.list_runs() == []  # no failed run is left behind
