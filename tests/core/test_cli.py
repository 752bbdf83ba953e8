"""The CLI handles user-facing errors in one place, and importing the core does no work."""

from __future__ import annotations

import subprocess
import sys

from click.testing import CliRunner

from kforge_core import Backend, KForgeError, hookimpl
from kforge_core.app import App
from kforge_core.cli import cli

from .helpers import GOOD_PROBLEM


class Silent:
    """A plugin that registers a backend but never answers the availability check."""

    @hookimpl
    def kforge_register_backends(self, register):
        register(Backend(name="boom", programming_model="x", device="cpu"))


def test_errors_become_one_clean_line_and_exit_code(tmp_path, monkeypatch):
    monkeypatch.chdir(tmp_path)
    (tmp_path / "kforge.toml").write_text("[harness]\ntrials = 'x'\n")
    result = CliRunner().invoke(cli, ["backends"], obj=App(load_plugins=False))
    assert result.exit_code == 1
    assert result.output.startswith(f"Error: {tmp_path / 'kforge.toml'}: harness.trials must be an integer")
    assert "Traceback" not in result.output


def test_debug_shows_the_traceback(tmp_path):
    result = subprocess.run(
        [sys.executable, "-m", "kforge_core", "--debug", "--no-plugins", "check", str(tmp_path / "missing.py")],
        capture_output=True, text=True,
    )
    assert result.returncode == 1
    assert "Traceback (most recent call last)" in result.stderr
    assert "Error: problem file not found" in result.stderr


def test_a_backend_nobody_vouches_for_is_unavailable():
    app = App(load_plugins=False, extra_plugins=(("silent", Silent()),))
    result = CliRunner().invoke(cli, ["backends", "--json"], obj=app)
    assert result.exit_code == 0
    assert '"reason": "no plugin answered the availability check"' in result.output


def test_kforge_error_carries_a_hint():
    assert str(KForgeError("bad thing", hint="do this")) == "bad thing\n  hint: do this"


def test_importing_the_core_loads_no_plugin_and_no_torch():
    code = "import sys, kforge_core, kforge_core.cli; print('torch' in sys.modules, 'kforge_testplugin' in sys.modules)"
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True).stdout
    assert out.split() == ["False", "False"]


def test_version():
    result = CliRunner().invoke(cli, ["--version"])
    assert result.exit_code == 0 and "0.1.0" in result.output


def test_check_and_plugins_refuse_a_broken_config_file(tmp_path):
    bad = tmp_path / "bad.toml"
    bad.write_text("[harness]\ntrails = 3\n")
    problem = tmp_path / "problem.py"
    problem.write_text(GOOD_PROBLEM)
    for command in (["plugins"], ["check", str(problem)]):
        result = CliRunner().invoke(cli, ["--no-plugins", "--config", str(bad), *command])
        assert result.exit_code == 1, (command, result.output)
        assert result.output.startswith(f"Error: {bad}: unknown key 'harness.trails'"), result.output
    missing = CliRunner().invoke(cli, ["--no-plugins", "--config", str(tmp_path / "none.toml"), "plugins"])
    assert missing.exit_code == 1 and "config file not found" in missing.output


def test_run_without_a_correct_candidate_exits_3_not_clicks_usage_code_2(tmp_path, monkeypatch):
    from kforge_core.commands import run as run_command

    class Ended:
        run_id, found_correct = "r1", False
        outputs = type("Outputs", (), {"report": None})()

    monkeypatch.setattr(run_command, "plan_run", lambda *args, **kwargs: None)
    monkeypatch.setattr(run_command, "start_run", lambda *args, **kwargs: Ended())
    monkeypatch.setattr(run_command, "print_summary", lambda *args, **kwargs: None)
    problem = tmp_path / "problem.py"
    problem.write_text(GOOD_PROBLEM)
    result = CliRunner().invoke(cli, ["run", str(problem), "--llm", "replay:x.jsonl", "--runs-dir",
                                      str(tmp_path / "runs")], obj=App(load_plugins=False))
    assert result.exit_code == 3, result.output
