"""The cpu backend's registration, options and availability."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest

from kforge_core.config import ConfigError
from kforge_core.plugins import PluginSelection, build_plugin_manager
from kforge_core.registry import BackendRegistry
from kforge_core.settings import Settings
from kforge_cpu import CPU_BACKEND, CpuOptions


@pytest.fixture
def registry() -> BackendRegistry:
    return BackendRegistry(build_plugin_manager(PluginSelection(only=("cpu",))))


def test_the_entry_point_registers_cpu_from_its_own_distribution(registry):
    entry = registry.get("cpu")
    assert (entry.plugin, entry.distribution) == ("cpu", "kforge-cpu")
    assert entry.backend.device == "cpu" and entry.backend.programming_model == "Numba"
    assert entry.backend.options_type is CpuOptions


def test_available_wherever_numba_imports(registry):
    import numba

    answer = registry.availability("cpu")
    assert answer.available, answer.reason
    assert f"Numba {numba.__version__}" in answer.detail
    assert f"{numba.config.NUMBA_NUM_THREADS} threads" in answer.detail


def test_the_threads_option_shows_in_the_availability(registry):
    assert "1 threads" in registry.availability("cpu", CpuOptions(threads=1)).detail


def test_unavailable_with_the_reason_when_numba_cannot_be_imported(tmp_path: Path):
    broken = tmp_path / "numba"
    broken.mkdir()
    (broken / "__init__.py").write_text("raise ImportError('this numba is broken')\n")
    code = ("from kforge_core.registry import BackendRegistry\n"
            "from kforge_core.plugins import PluginSelection, build_plugin_manager\n"
            "a = BackendRegistry(build_plugin_manager(PluginSelection(only=('cpu',)))).availability('cpu')\n"
            "print(a.available, a.reason)\n")
    env = {**os.environ, "PYTHONPATH": str(tmp_path)}
    done = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, env=env, timeout=120)
    assert done.returncode == 0, done.stderr
    assert done.stdout.startswith("False numba cannot be imported (ImportError: this numba is broken)")


def test_kforge_backends_lists_cpu_as_available():
    kforge = Path(sys.executable).with_name("kforge")
    done = subprocess.run([str(kforge), "backends", "--json"], capture_output=True, text=True, timeout=120)
    assert done.returncode == 0, done.stderr
    rows = {row["name"]: row for row in json.loads(done.stdout)}
    assert rows["cpu"]["available"] is True and rows["cpu"]["distribution"] == "kforge-cpu"


def test_options_come_from_the_backends_cpu_table():
    options = Settings(backends={"cpu": {"fastmath": False, "threads": 1}}).backend_options(CPU_BACKEND)
    assert options == CpuOptions(fastmath=False, threads=1)


@pytest.mark.parametrize("table, message", [
    ({"threads": -1}, "backends.cpu.threads = -1"),
    ({"threads": 10_000}, "backends.cpu.threads = 10000"),
    ({"profile_repetitions": 0}, "backends.cpu.profile_repetitions = 0"),
    ({"fastmath": "yes"}, "backends.cpu.fastmath must be true or false"),
    ({"vector_width": 8}, "unknown key 'backends.cpu.vector_width'"),
])
def test_bad_options_are_config_errors_naming_the_key(table, message):
    with pytest.raises(ConfigError, match=message.replace(".", r"\.").replace("(", r"\(")):
        Settings(backends={"cpu": table}, sources=("kforge.toml",)).backend_options(CPU_BACKEND)
