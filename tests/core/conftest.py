"""Fixtures for the core's tests: the separately packaged test plugins, installed for real into a temp dir."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import pytest

TESTS = Path(__file__).resolve().parents[1]
PLUGIN_PACKAGES = ["kforge_testplugin", "kforge_brokenplugin", "kforge_dupplugin", "kforge_toydevice"]


@pytest.fixture(scope="session")
def plugin_site(tmp_path_factory) -> Path:
    """A directory holding the test plugin distributions, installed by pip (entry points and all)."""
    target = tmp_path_factory.mktemp("plugin-site")
    subprocess.run(
        [sys.executable, "-m", "pip", "install", "-q", "--no-deps", "--no-build-isolation", "--no-index",
         "--target", str(target), *(str(TESTS / "plugins" / name) for name in PLUGIN_PACKAGES)],
        check=True,
        capture_output=True,
    )
    return target


@pytest.fixture
def kforge(plugin_site, tmp_path):
    """Run the real ``kforge`` command in a subprocess with the test plugins on its path.

    ``plugins`` sets KFORGE_PLUGINS (None leaves it unset: every installed plugin loads).
    """

    def run(*args: str, plugins: str | None = "testplugin", env: dict[str, str] | None = None, cwd: Path = tmp_path):
        return kforge_command(plugin_site, cwd, *args, plugins=plugins, env=env)

    return run


def kforge_command(plugin_site: Path, cwd: Path, *args: str, plugins: str | None = "testplugin",
                   env: dict[str, str] | None = None) -> subprocess.CompletedProcess[str]:
    """``kforge ARGS`` in a subprocess in ``cwd``, with the installed test plugins on its path."""
    environ = {k: v for k, v in os.environ.items() if not k.startswith("KFORGE_")}
    environ["PYTHONPATH"] = os.pathsep.join([str(plugin_site), environ.get("PYTHONPATH", "")]).rstrip(os.pathsep)
    if plugins is not None:
        environ["KFORGE_PLUGINS"] = plugins
    environ.update(env or {})
    return subprocess.run(
        [sys.executable, "-m", "kforge_core", *args], cwd=cwd, env=environ, capture_output=True, text=True
    )


@pytest.fixture
def plugin_path(plugin_site, monkeypatch):
    """Put the installed test plugins on this process's path, so entry-point discovery finds them in-process."""
    monkeypatch.syspath_prepend(str(plugin_site))
    return plugin_site
