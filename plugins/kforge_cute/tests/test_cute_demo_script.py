"""The cute replay script (examples/replay/cute_demo.jsonl) is what its generator writes from the readable replies,
and its code replies are the candidates they stand for."""

import importlib.util

import pytest

from kforge_core.agents import parse_reply

from cute_testing import EXAMPLES, HERE

REPLAY = HERE.parents[2] / "examples" / "replay"


def test_the_committed_script_is_what_the_generator_writes():
    spec = importlib.util.spec_from_file_location("make_cute_demo", REPLAY / "make_cute_demo.py")
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    assert (REPLAY / "cute_demo.jsonl").read_text() == "\n".join(module.demo_lines()) + "\n", (
        "run: python examples/replay/make_cute_demo.py")


def test_the_replies_are_a_broken_a_slow_and_the_fast_kernel():
    pytest.importorskip("llama_index.core", reason="the replay provider needs llama-index (absent on GPU machines)")
    from kforge_core.llm.replay import ReplayScript

    script = ReplayScript.load(REPLAY / "cute_demo.jsonl")
    agents = [reply.agent for reply in script.replies]
    assert agents == ["generation", "generation", "analysis", "generation"]
    sources = [parse_reply(r.text, label="x").candidate.source for r in script.replies if r.agent == "generation"]
    assert "    total = 0\n" in sources[0] and "    total = 0\n" not in sources[1]
    assert sources[2].strip() == (EXAMPLES / "cute_solution.py").read_text().strip()
