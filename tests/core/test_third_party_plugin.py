"""A plugin packaged on its own (tests/plugins/kforge_testplugin) extends KForge with no change to the core."""

from __future__ import annotations

import json

from kforge_core import Candidate
from kforge_core.app import App
from kforge_core.plugins import PluginSelection
from kforge_core.problem import load_problem
from kforge_core.records import StageContext

from .helpers import write_problem


def test_kforge_backends_lists_the_new_backend_with_its_distribution(kforge):
    result = kforge("backends", "--json")
    assert result.returncode == 0, result.stderr
    rows = {row["name"]: row for row in json.loads(result.stdout)}
    echo = rows["echo"]
    assert echo["distribution"] == "kforge-testplugin"
    assert echo["version"] == "1.2.3"
    assert echo["programming_model"] == "PyTorch operators"
    assert echo["available"] is True
    assert echo["detail"] == "echo says hello at level 1"  # its own availability hook answered


def test_backend_options_come_from_config_into_the_plugins_dataclass(kforge, tmp_path):
    (tmp_path / "kforge.toml").write_text('[backends.echo]\ngreeting = "bonjour"\nlevel = 3\n')
    result = kforge("backends", "--json")
    assert result.returncode == 0, result.stderr
    assert json.loads(result.stdout)[0]["detail"] == "echo says bonjour at level 3"


def test_kforge_plugins_lists_its_hooks(kforge):
    result = kforge("plugins")
    plugins = {p["name"]: p for p in json.loads(result.stdout)}
    assert plugins["testplugin"]["distribution"] == "kforge-testplugin"
    assert "kforge_lower" in plugins["testplugin"]["hooks"]
    assert "kforge.generic_stages" not in plugins


def test_stage_hooks_of_the_installed_plugin_are_called(plugin_path, tmp_path, monkeypatch):
    monkeypatch.setenv("KFORGE_PLUGINS", "testplugin")
    app = App()
    backend = app.backend("echo").backend
    hook = app.plugins.hook
    problem = load_problem(write_problem(tmp_path))

    lowering = hook.kforge_lower(
        backend=backend, problem=problem, options=backend.default_options(), cache_dir=tmp_path
    )
    assert lowering.programming_model == f"Write ModelNew with PyTorch operators for {problem.name}."

    workdir = tmp_path / "work"
    workdir.mkdir()
    candidate = Candidate.from_source("class ModelNew:\n    pass\n", label="c1")
    context = StageContext(problem=problem, workdir=workdir)
    compiled = hook.kforge_compile(backend=backend, candidate=candidate, context=context)
    assert compiled.ok and compiled.log == "echo: built"
    assert (workdir / "echo-compiled.txt").read_text() == candidate.digest

    profile = hook.kforge_profile(backend=backend, candidate=candidate, context=context)
    assert profile.raw == "echo profiled c1"
    summary = hook.kforge_summarize_profile(backend=backend, problem=problem, profile=profile)
    assert summary.text == "echo summary: echo_kernel took 1.5 us"


def test_the_plugins_hooks_are_never_asked_about_another_backend(plugin_path, monkeypatch, tmp_path):
    """The echo plugin asks no backend's name; the core calls its stage hooks only for the backend it registered."""
    monkeypatch.setenv("KFORGE_PLUGINS", "testplugin")
    from kforge_core import Backend, hookimpl
    from kforge_core.plugins import build_plugin_manager
    from kforge_core.registry import BackendRegistry

    other = Backend(name="other", programming_model="x", device="cpu")

    class Other:
        @hookimpl
        def kforge_register_backends(self, register):
            register(other)

    loaded = build_plugin_manager(PluginSelection.from_env(), extra_plugins=[("other", Other())])
    registry = BackendRegistry(loaded)
    problem = load_problem(write_problem(tmp_path))
    lower = registry.hooks("other").caller("lower")
    assert lower(backend=other, problem=problem, options=None, cache_dir=tmp_path) is None
    echo = registry.get("echo").backend
    lowering = registry.hooks("echo").caller("lower")(backend=echo, problem=problem, options=None, cache_dir=tmp_path)
    assert lowering.backend == "echo"


def test_plugin_selection_travels_as_plain_data(plugin_path, monkeypatch):
    monkeypatch.setenv("KFORGE_PLUGINS", "testplugin")
    selection = App().plugin_selection
    assert selection == PluginSelection(entry_points=True, only=("testplugin",), modules=())


def test_registration_and_availability_hooks_through_the_manager(plugin_path, monkeypatch):
    monkeypatch.setenv("KFORGE_PLUGINS", "testplugin")
    hook = App().plugins.hook
    registered = []
    hook.kforge_register_backends(register=registered.append)
    assert [b.name for b in registered] == ["echo"]
    options = registered[0].options_type(greeting="hi", level=2)
    answer = hook.kforge_backend_availability(backend=registered[0], options=options)
    assert answer.available and answer.detail == "echo says hi at level 2"


def test_the_readme_plugin_works_as_written(tmp_path, monkeypatch):
    """The minimal plugin in the documentation registers, answers availability and lowers, exactly as printed."""
    import re
    import sys
    from pathlib import Path

    from kforge_core.plugins import build_plugin_manager
    from kforge_core.registry import BackendRegistry

    root = Path(__file__).resolve().parents[2]  # the guide to writing a plugin is docs/plugins.md
    guide = "\n".join(page.read_text() for page in [root / "README.md", *sorted((root / "docs").rglob("*.md"))])
    code = re.search(r"```python\n(# kforge_mybackend/__init__.py\n.*?)```", guide, re.S).group(1)
    package = tmp_path / "kforge_mybackend"
    package.mkdir()
    (package / "__init__.py").write_text(code)
    monkeypatch.syspath_prepend(str(tmp_path))
    loaded = build_plugin_manager(PluginSelection(entry_points=False, modules=("kforge_mybackend",)))
    registry = BackendRegistry(loaded)
    assert registry.availability("mybackend").detail == "runs on any CPU"
    backend = registry.get("mybackend").backend
    problem = load_problem(write_problem(tmp_path))
    lowering = loaded.hook.kforge_lower(backend=backend, problem=problem, options=None, cache_dir=tmp_path)
    assert lowering.backend == "mybackend"
    sys.modules.pop("kforge_mybackend", None)


def test_the_plugins_compile_hook_runs_in_the_harness_worker(kforge, tmp_path):
    """``kforge eval`` with the third-party backend: its compile hook runs in the isolated worker (it leaves its
    mark in the candidate's kept scratch directory) and the core's generic verify judges the result."""
    problem = write_problem(tmp_path)
    candidate = tmp_path / "model_new.py"
    candidate.write_text(
        "import torch\n\n\nclass ModelNew(torch.nn.Module):\n"
        "    def __init__(self, scale):\n        super().__init__()\n"
        "        self.scale = scale\n        self.linear = torch.nn.Linear(8, 4)\n\n"
        "    def forward(self, x):\n        return torch.addmm(self.linear.bias, x, self.linear.weight.t()) * self.scale\n"
    )
    keep = tmp_path / "kept"
    result = kforge("eval", str(problem), str(candidate), "--backend", "echo", "--json", "--no-timing",
                    "--policy", "report", "--keep", str(keep), env={"KFORGE_HARNESS__SPARE_WORKERS": "0"})
    verdict = json.loads(result.stdout)
    assert verdict["correct"] is True, result.stdout + result.stderr
    assert verdict["compile"]["log"] == "echo: built"
    marks = list(keep.rglob("echo-compiled.txt"))
    assert len(marks) == 1
