"""Triton as a language: its programming model, example, compile errors and first-call warm-up serve any backend
that speaks Triton, and device work goes through the backend's own Device."""

from __future__ import annotations

import importlib.util
import os
import subprocess
import sys
from pathlib import Path

import pytest
import torch

from kforge_core.devices.cpu import CpuDevice
from kforge_core.devices.harness_device import HarnessDevice
from kforge_core.languages import triton as triton_language
from kforge_core.problem import load_problem
from kforge_core.records import Backend

from .helpers import write_problem

EXAMPLE = Path(triton_language.__file__).parent / "example"


def test_the_programming_model_names_the_backends_target():
    text = triton_language.programming_model("the Intel GPU")
    assert "for the Intel GPU on its first launch" in text
    assert "@triton.jit" in text and "input_precision" in text and "$arch" not in text


def test_the_example_is_a_valid_problem_and_a_triton_solution():
    example = triton_language.example()
    assert "@triton.jit" in example.solution and "class ModelNew" in example.solution
    assert load_problem(EXAMPLE / "problem.py").outputs[0].dtype == "float32"
    assert example.problem == (EXAMPLE / "problem.py").read_text()


def test_tritons_build_errors_are_told_apart_and_trimmed():
    CompilationError = type("CompilationError", (Exception,), {"__module__": "triton.compiler.errors"})
    assert triton_language.is_build_error(CompilationError("at 5:8"))
    assert not triton_language.is_build_error(RuntimeError("CompilationError"))  # not Triton's own
    message = "CompilationError: at 5:8:\n    x = tl.load(ptr)\n        ^\nNameError('undefined')\n" + "\n" * 5
    trimmed = triton_language.trim_error(message)
    assert "^" in trimmed and "NameError" in trimmed and not trimmed.endswith("\n")
    assert len(triton_language.trim_error("x\n" * 10_000)) <= triton_language.errors.MAX_CHARS


class CountingDevice(CpuDevice):
    """The host CPU, counting the waits the warm-up asks of it."""

    waits = 0

    def synchronize(self) -> None:
        type(self).waits += 1


def test_the_first_call_runs_through_the_backends_device_and_leaves_the_random_state(tmp_path):
    problem = write_problem(tmp_path)
    module = type(sys)("candidate")
    exec("import torch\nclass ModelNew(torch.nn.Module):\n"
         "    def __init__(self, scale):\n        super().__init__()\n        self.calls = 0\n"
         "    def forward(self, x):\n        return torch.rand(1) + x.sum()\n", module.__dict__)
    device = HarnessDevice(CountingDevice(Backend(name="t", programming_model="Triton", device="cpu")))
    state = torch.get_rng_state()
    before = set(sys.modules)
    try:
        triton_language.run_forward(module, problem, device, calls=2)
    finally:  # the problem module it imported stays private to this test
        for name in set(sys.modules) - before:
            sys.modules.pop(name)
    assert CountingDevice.waits == 2  # each call is waited for within its own time limit
    assert torch.equal(torch.get_rng_state(), state)


@pytest.mark.skipif(importlib.util.find_spec("triton") is None, reason="triton not installed (pip install triton)")
def test_the_example_matches_its_reference_in_tritons_interpreter():
    script = f"""
import sys, torch
sys.path.insert(0, {str(EXAMPLE)!r})
import problem, solution
for rows, cols in ((5, 96), (3, 80)):
    reference = problem.Model(cols, 1e-6); model = solution.ModelNew(cols, 1e-6)
    model.load_state_dict(reference.state_dict())
    x, r = torch.randn(rows, cols), torch.randn(rows, cols)
    error = (model(x, r) - reference(x, r)).abs().max().item()
    assert error < 1e-5, (rows, cols, error)
print("ok")
"""
    env = {**os.environ, "TRITON_INTERPRET": "1"}
    done = subprocess.run([sys.executable, "-c", script], capture_output=True, text=True, env=env, timeout=300)
    assert done.returncode == 0, done.stderr[-2000:]
    assert done.stdout.strip().endswith("ok")


def test_tritons_compilations_are_marked_as_builds_and_its_hooks_put_back():
    from types import SimpleNamespace

    from kforge_core.languages.triton.builds import triton_builds_marked
    from kforge_core.timing.stage_timer import StageTimer

    marks = []

    class Recording(StageTimer):
        def enter(self, kind, what):
            marks.append(("enter", kind, what))

        def leave(self, kind, what):
            marks.append(("leave", kind, what))

    def skip_cached(**kwargs):
        return kwargs["key"] == "cached"  # a hook set before ours that tells Triton not to compile

    runtime = SimpleNamespace(jit_cache_hook=skip_cached, jit_post_compile_hook=None)
    with triton_builds_marked(Recording(), (runtime, "jit_cache_hook", "jit_post_compile_hook")):
        assert not runtime.jit_cache_hook(key="new", fn=SimpleNamespace(name="add_kernel"))
        runtime.jit_post_compile_hook(key="new")
        assert runtime.jit_cache_hook(key="cached", fn=SimpleNamespace(name="add_kernel"))  # nothing compiles
        runtime.jit_cache_hook(key="raises", fn=SimpleNamespace(name="bad_kernel"))  # never reaches the second
    add, bad = "Triton compiling add_kernel", "Triton compiling bad_kernel"
    assert marks == [("enter", "build", add), ("leave", "build", add), ("enter", "build", bad), ("leave", "build", bad)]
    assert runtime.jit_cache_hook is skip_cached and runtime.jit_post_compile_hook is None
