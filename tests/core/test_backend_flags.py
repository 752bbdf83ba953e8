"""``--option KEY=VALUE`` and ``--sanitize`` on ``kforge eval`` and ``kforge run``: a backend's options from the
command line, on top of the config file and the environment."""

from __future__ import annotations

from dataclasses import dataclass

import pytest
from click.testing import CliRunner

from kforge_core import Backend, hookimpl
from kforge_core.app import App
from kforge_core.cli import cli
from kforge_core.commands.backend_flags import settings_with_backend_options
from kforge_core.errors import KForgeError



@dataclass(frozen=True)
class KnobOptions:
    arch: str = "v1"
    threads: int = 4
    sanitize: bool = False


class KnobPlugin:
    KNOB = Backend(name="knob", programming_model="Toy", device="cpu", options_type=KnobOptions)
    BARE = Backend(name="bare", programming_model="Toy", device="cpu")

    @hookimpl
    def kforge_register_backends(self, register):
        register(self.KNOB)
        register(self.BARE)


@pytest.fixture
def app(tmp_path, monkeypatch) -> App:
    monkeypatch.chdir(tmp_path)  # no kforge.toml of the repository's
    return App(load_plugins=False, extra_plugins=(("knob", KnobPlugin()),))


def test_options_and_sanitize_reach_the_backends_options(app, monkeypatch):
    monkeypatch.setenv("KFORGE_BACKENDS__KNOB__ARCH", "from-env")
    settings = settings_with_backend_options(app, {"backend": "knob"}, ("threads=8",), sanitize=True)
    assert settings.backend_options(KnobPlugin.KNOB) == KnobOptions(arch="from-env", threads=8, sanitize=True)
    settings = settings_with_backend_options(app, {"backend": "knob"}, ("arch=v2",), sanitize=False)
    assert settings.backend_options(KnobPlugin.KNOB) == KnobOptions(arch="v2")


def test_without_flags_the_settings_are_the_commands(app):
    settings = settings_with_backend_options(app, {"backend": "knob", "harness.trials": 2}, (), sanitize=False)
    assert settings.harness.trials == 2 and settings.backend_options(KnobPlugin.KNOB) == KnobOptions()


@pytest.mark.parametrize("backend, assignments, sanitize, message", [
    ("knob", ("thread=8",), False, "backend 'knob' has no option 'thread' (its options: arch, threads, sanitize)"),
    ("bare", (), True, "backend 'bare' takes no options"),
    ("knob", ("threads",), False, "expected KEY=VALUE"),
])
def test_an_option_the_backend_lacks_is_an_error_naming_its_options(app, backend, assignments, sanitize, message):
    with pytest.raises(KForgeError) as caught:
        settings_with_backend_options(app, {"backend": backend}, assignments, sanitize)
    assert message in caught.value.message


def test_kforge_eval_says_when_the_backend_cannot_sanitize(app, tmp_path):
    problem = tmp_path / "problem.py"
    problem.write_text("raise SystemExit('the problem is not read before the flags are checked')\n")
    result = CliRunner().invoke(cli, ["eval", str(problem), str(problem), "--backend", "bare", "--sanitize"],
                                obj=app)
    assert result.exit_code == 1
    assert "backend 'bare' takes no options" in result.output
    assert "cannot rerun candidates under a memory checker" in result.output
