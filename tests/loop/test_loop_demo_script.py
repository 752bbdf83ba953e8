"""The demo's replay script is generated from the readable replies in examples/replay/cpu_demo/ and stays in sync."""

from __future__ import annotations

import importlib.util

from loop_helpers import EXAMPLES

from kforge_core.agents import parse_reply
from kforge_core.llm.replay import ReplayScript


def generator():
    spec = importlib.util.spec_from_file_location("make_cpu_demo", EXAMPLES / "replay" / "make_cpu_demo.py")
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


def test_the_committed_script_is_what_the_generator_writes():
    module = generator()
    assert (EXAMPLES / "replay" / "cpu_demo.jsonl").read_text() == "\n".join(module.script_lines()) + "\n", (
        "run: python examples/replay/make_cpu_demo.py")


def test_each_generation_reply_holds_the_candidate_it_stands_for():
    script = ReplayScript.load(EXAMPLES / "replay" / "cpu_demo.jsonl")
    kinds = []
    for reply in script.replies:
        if reply.agent == "generation":
            parsed = parse_reply(reply.text, label="x")
            kinds.append("no code" if parsed.candidate is None else "code")
            if parsed.candidate is not None:
                assert "class ModelNew(nn.Module)" in parsed.candidate.source
    assert kinds == ["no code"] + ["code"] * 7
