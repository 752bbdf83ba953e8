"""The contract documents itself: every hook has pytest's docstring shape, and every hook has a test."""

from __future__ import annotations

import inspect
import re
from pathlib import Path

import pytest

from kforge_core import hookspecs

ROOT = Path(__file__).resolve().parents[2]
HOOKS = sorted(name for name in dir(hookspecs) if name.startswith("kforge_"))
FIRSTRESULT = "Stops at the first non-None result."


def _spec_opts(name: str) -> dict:
    return getattr(getattr(hookspecs, name), hookspecs.PROJECT + "_spec")


def test_the_contract_has_the_hooks_the_core_calls():
    assert HOOKS == [
        "kforge_backend_availability",
        "kforge_compile",
        "kforge_device_namespaces",
        "kforge_lower",
        "kforge_prebuild",
        "kforge_profile",
        "kforge_register_backends",
        "kforge_source_checks",
        "kforge_summarize_profile",
        "kforge_verify",
    ]


@pytest.mark.parametrize("name", HOOKS)
def test_every_hook_is_documented_in_pytests_shape(name):
    function = getattr(hookspecs, name)
    doc = inspect.getdoc(function) or ""
    summary = doc.splitlines()[0] if doc else ""
    assert summary and summary[0].isupper(), f"{name}: the docstring starts with a one-line summary"
    for parameter in inspect.signature(function).parameters:
        assert f":param {parameter}:" in doc, f"{name}: parameter {parameter!r} is not documented"
    if inspect.signature(function).return_annotation not in ("None", None):
        assert ":return:" in doc, f"{name}: the return value is not documented"
    assert (FIRSTRESULT in doc) == bool(_spec_opts(name).get("firstresult")), f"{name}: firstresult sentence"
    assert "Example::" in doc, f"{name}: no example"


def _test_sources() -> str:
    files = list((ROOT / "tests").rglob("test_*.py")) + list((ROOT / "plugins").glob("*/tests/test_*.py"))
    return "\n".join(path.read_text() for path in files)


@pytest.mark.parametrize("name", HOOKS)
def test_every_hook_has_a_test(name):
    # a test calls the hook through the plugin manager (hook.kforge_x(...)), through a backend's routed hooks
    # (caller("x")(...), collect("x", ...)), or through the CLI that calls it
    stage = name.removeprefix("kforge_")
    pattern = rf"hook\.{name}\(|caller\(\"{stage}\"\)\(|collect\(\"{stage}\""
    assert re.search(pattern, _test_sources()), f"no test calls {name} through the plugin manager"
