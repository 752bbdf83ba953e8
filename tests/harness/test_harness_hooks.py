"""The core's generic stage hooks, called through the plugin manager (here, in the test process), and a plugin's
own implementation answering before them."""

from __future__ import annotations

import dataclasses

import pytest

from kforge_core import hookimpl
from kforge_core.plugins import build_plugin_manager
from kforge_core.records import Failure, StageContext, VerifyResult

from .helpers import QUICK, SELECTION, TORCH_CPU, candidate, problem


@pytest.fixture
def loaded():
    return build_plugin_manager(SELECTION)


@pytest.fixture
def context(tmp_path):
    settings = dataclasses.replace(QUICK, trials=2)
    return lambda name="relu_scale": StageContext(problem=problem(name), workdir=tmp_path, settings=settings)


def test_generic_compile(loaded, context):
    ok = loaded.hook.kforge_compile(backend=TORCH_CPU, candidate=candidate("relu_scale_numpy"), context=context())
    assert ok.ok and ok.failure is None
    bad = loaded.hook.kforge_compile(backend=TORCH_CPU, candidate=candidate("syntax_error"), context=context())
    assert bad.failure is Failure.SYNTAX and "syntax_error.py:5" in bad.log


def test_generic_verify_builds_the_candidate_under_the_references_seed_and_says_so(loaded, context):
    ctx = context("linear_relu")
    good = candidate("linear_relu_numpy")
    assert loaded.hook.kforge_compile(backend=TORCH_CPU, candidate=good, context=ctx).ok
    result = loaded.hook.kforge_verify(backend=TORCH_CPU, candidate=good, context=ctx)
    assert result.correct, result.message
    assert len(result.trials) == 2 and all(t.passed for t in result.trials)
    assert "parameters: seeded construction (built under seed 42 as Model was; nothing copied)" in result.notes


def test_generic_verify_reports_where_outputs_differ(loaded, context):
    ctx = context()
    wrong = candidate("mismatch")
    loaded.hook.kforge_compile(backend=TORCH_CPU, candidate=wrong, context=ctx)
    result = loaded.hook.kforge_verify(backend=TORCH_CPU, candidate=wrong, context=ctx)
    assert result.failure is Failure.MISMATCH
    assert "max abs error" in result.trials[0].message and "at [" in result.trials[0].message


def test_generic_profile_and_summary(loaded, context):
    ctx = context()
    good = candidate("relu_scale_numpy")
    loaded.hook.kforge_compile(backend=TORCH_CPU, candidate=good, context=ctx)
    profile = loaded.hook.kforge_profile(backend=TORCH_CPU, candidate=good, context=ctx)
    assert profile.tool == "torch.profiler"
    assert not [op for op in profile.ops if op in ("aten::relu", "aten::mul")]  # NumPy did the work
    summary = loaded.hook.kforge_summarize_profile(backend=TORCH_CPU, problem=ctx.problem, profile=profile)
    assert "ran outside them" in summary.text


class OwnVerify:
    """A plugin with its own verify for torch-cpu: it answers before the core's generic one."""

    @hookimpl
    def kforge_verify(self, backend, candidate, context):
        if backend.name == TORCH_CPU.name:
            return VerifyResult(correct=False, failure=Failure.MISMATCH, message="the plugin's own verify")
        return None


def test_a_plugins_own_stage_hook_answers_before_the_generic_one(context):
    loaded = build_plugin_manager(SELECTION, extra_plugins=[("own-verify", OwnVerify())])
    result = loaded.hook.kforge_verify(backend=TORCH_CPU, candidate=candidate("relu_scale_numpy"), context=context())
    assert result.message == "the plugin's own verify"


def test_generic_verify_keeps_the_type_and_the_whole_message_of_an_error_without_colours(loaded, context):
    ctx = context()
    raising = candidate("forward_raises_multiline")
    assert loaded.hook.kforge_compile(backend=TORCH_CPU, candidate=raising, context=ctx).ok
    result = loaded.hook.kforge_verify(backend=TORCH_CPU, candidate=raising, context=ctx)
    assert result.failure is Failure.RUNTIME
    assert "TypeError: Failed in nopython mode pipeline (step: nopython frontend)\n" \
           "No implementation of function add found for signature:\n\n >>> add(float32, unicode_type)" \
           in result.message
    assert "\x1b" not in result.message


def test_the_candidate_class_is_a_setting(loaded, tmp_path):
    settings = dataclasses.replace(QUICK, trials=2, candidate_class="ReluKernel")
    ctx = StageContext(problem=problem("relu_scale"), workdir=tmp_path, settings=settings)
    named = candidate("relu_kernel_class")
    assert loaded.hook.kforge_compile(backend=TORCH_CPU, candidate=named, context=ctx).ok
    assert loaded.hook.kforge_verify(backend=TORCH_CPU, candidate=named, context=ctx).correct
    other = loaded.hook.kforge_compile(backend=TORCH_CPU, candidate=candidate("relu_scale_numpy"), context=ctx)
    assert other.failure is Failure.NO_MODEL_NEW and other.log == "relu_scale_numpy.py defines no class ReluKernel"


def test_a_function_that_builds_the_model_stands_for_the_class(loaded, context):
    ctx = context()
    factory = candidate("relu_scale_factory")
    built = loaded.hook.kforge_compile(backend=TORCH_CPU, candidate=factory, context=ctx)
    assert built.ok, built.log
    assert "its Model was evaluated as the candidate" in built.log and "Model is a function" in built.log
    result = loaded.hook.kforge_verify(backend=TORCH_CPU, candidate=factory, context=ctx)
    assert result.correct, result.message
