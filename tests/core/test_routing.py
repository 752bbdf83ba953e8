"""Stage hooks reach only the plugin that registered the backend, plus the core's generic implementations."""

from __future__ import annotations

from pathlib import Path

from kforge_core import Availability, Backend, Candidate, CompileResult, hookimpl
from kforge_core.plugins import PluginSelection, build_plugin_manager
from kforge_core.records import StageContext
from kforge_core.registry import BackendRegistry

from .helpers import write_problem

OWN = Backend(name="own", programming_model="PyTorch", device="cpu")
GREEDY = Backend(name="greedy", programming_model="PyTorch", device="cpu")
QUIET = Backend(name="quiet", programming_model="PyTorch", device="cpu")


class OwnPlugin:
    """Registers ``own`` and compiles its candidates."""

    @hookimpl
    def kforge_register_backends(self, register):
        register(OWN)

    @hookimpl
    def kforge_backend_availability(self, backend):
        return Availability.yes(f"own answers for {backend.name}")

    @hookimpl
    def kforge_compile(self, backend, candidate, context):
        return CompileResult(ok=True, log=f"own compiled for {backend.name}")


class GreedyPlugin:
    """Registers ``greedy``, and answers every stage hook for any backend (it never asks whose backend it is)."""

    @hookimpl
    def kforge_register_backends(self, register):
        register(GREEDY)

    @hookimpl
    def kforge_backend_availability(self, backend):
        return Availability.no(f"greedy took over {backend.name}")

    @hookimpl
    def kforge_compile(self, backend, candidate, context):
        return CompileResult(ok=True, log=f"greedy compiled for {backend.name}")

    @hookimpl
    def kforge_prebuild(self, backend, candidate, context):
        return CompileResult(ok=True, log=f"greedy built {backend.name} ahead")


class QuietPlugin:
    """Registers ``quiet`` and implements no stage hook: the core's generic ones serve it."""

    @hookimpl
    def kforge_register_backends(self, register):
        register(QUIET)


def _registry() -> BackendRegistry:
    # registered last, greedy's implementations are called first by the whole plugin manager
    plugins = [("own", OwnPlugin()), ("quiet", QuietPlugin()), ("greedy", GreedyPlugin())]
    return BackendRegistry(build_plugin_manager(PluginSelection(entry_points=False), extra_plugins=plugins))


def _context(tmp_path: Path) -> StageContext:
    from kforge_core.problem import load_problem

    return StageContext(problem=load_problem(write_problem(tmp_path)), workdir=tmp_path)


def test_a_second_plugin_cannot_take_over_a_backend_it_did_not_register(tmp_path):
    registry = _registry()
    candidate = Candidate.from_source("class ModelNew: pass\n")
    # the whole plugin manager lets greedy answer for own's backend: what routing prevents
    everyone = registry.loaded.hook.kforge_compile(backend=OWN, candidate=candidate, context=_context(tmp_path))
    assert everyone.log == "greedy compiled for own"
    compiled = registry.hooks("own").caller("compile")(backend=OWN, candidate=candidate, context=_context(tmp_path))
    assert compiled.log == "own compiled for own"
    assert registry.availability("own") == Availability.yes("own answers for own")
    assert registry.availability("greedy").reason == "greedy took over greedy"


def test_a_backend_without_its_own_implementation_gets_the_cores_generic_one(tmp_path):
    registry = _registry()
    (tmp_path / "work").mkdir()
    context = StageContext(problem=_context(tmp_path).problem, workdir=tmp_path / "work")
    candidate = Candidate.from_source("x = 1\n")  # the generic compile finds no ModelNew; greedy would say ok
    compiled = registry.hooks("quiet").caller("compile")(backend=QUIET, candidate=candidate, context=context)
    assert not compiled.ok and "ModelNew" in compiled.log
    assert registry.hooks("quiet").caller("prebuild")(backend=QUIET, candidate=candidate, context=context) is None
    assert registry.availability("quiet").reason == "no plugin answered the availability check"


def test_which_backends_build_ahead_follows_from_their_own_plugin():
    registry = _registry()
    assert registry.hooks("greedy").builds_ahead
    assert not registry.hooks("own").builds_ahead
    assert not registry.hooks("quiet").builds_ahead
