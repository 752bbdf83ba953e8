"""What the generation agent reads for metal, and what comes back: the programming model, the RMSNorm example,
the prompt they make, and the candidate a reply in the asked format yields."""

from __future__ import annotations

import ast
import inspect
import re

import torch

from kforge_core.agents import GenerationAgent, GenerationRequest, PrecisionTerms, parse_reply
from kforge_core.precision_contract import CONTRACTS
from kforge_core.problem import load_problem
from kforge_core.prompts import PromptTemplates
from kforge_metal.device_facts import MetalFacts
from kforge_metal.lowering import lower, shipped_example
from kforge_metal.shader_sources import shader_strings
from kforge_core.records import Candidate

FACTS = MetalFacts(chip="Apple M2 Pro", gpu_cores=19, metal_family="Metal 3", unified_memory_bytes=32 << 30)


def test_the_programming_model_says_how_to_compile_and_dispatch():
    model = lower(FACTS).programming_model
    for must in ("torch.mps.compile_shader(SOURCE)", "lib.name(arg0, arg1, ..., threads=N, group_size=G)",
                 "size of the whole grid in threads", "SIMD-groups of 32", "threadgroup_barrier",
                 "simdgroup_multiply_accumulate", "Unified memory", "`constant long&`", "program_source:LINE:COL"):
        assert must in model, must
    lowering = lower(FACTS)
    assert lowering.backend == "metal" and "Apple M2 Pro, 19-core GPU (Metal 3)" in lowering.hardware
    assert "torch.mps.compile_shader" in lowering.reply_format


def test_the_example_problem_is_a_valid_problem_and_the_solution_matches_it(tmp_path):
    example = shipped_example()
    path = tmp_path / "rmsnorm.py"
    path.write_text(example.problem)
    problem = load_problem(path)
    assert [spec.describe() for spec in problem.inputs] == ["tensor[4096, 4096] float32"]

    namespace: dict = {}
    exec(compile(example.solution, "rmsnorm_msl.py", "exec"), namespace)  # defines; compiles nothing yet
    problem_namespace: dict = {}
    exec(compile(example.problem, "rmsnorm.py", "exec"), problem_namespace)
    assert (inspect.signature(namespace["ModelNew"].__init__).parameters.keys()
            == inspect.signature(problem_namespace["Model"].__init__).parameters.keys())
    assert isinstance(namespace["ModelNew"](4096), torch.nn.Module)

    (shader,) = shader_strings(Candidate.from_source(example.solution))
    assert shader.exact and shader.value == namespace["SOURCE"]
    kernels = re.findall(r"kernel void (\w+)\(", shader.value)
    dispatched = re.findall(r"library\(\)\.(\w+)\(", example.solution)
    assert kernels == dispatched == ["rmsnorm"]
    # the dispatch passes as many arguments as the kernel binds buffers, in the buffers' order
    buffers = [int(n) for n in re.findall(r"\[\[buffer\((\d+)\)\]\]", shader.value)]
    call = next(node for node in ast.walk(ast.parse(example.solution))
                if isinstance(node, ast.Call) and getattr(node.func, "attr", "") == "rmsnorm")
    assert buffers == list(range(len(call.args))) == [0, 1, 2, 3, 4]
    assert {k.arg for k in call.keywords} == {"threads", "group_size"}


def test_the_generation_prompt_carries_the_model_the_example_and_the_format(tmp_path):
    path = tmp_path / "problem.py"
    path.write_text(shipped_example().problem)
    fp32 = PrecisionTerms(CONTRACTS["fp32"], (("float32", 1e-4, 1e-4),))
    agent = GenerationAgent(PromptTemplates(), load_problem(path), lower(FACTS), precision=fp32)
    prompt = agent.prompt(GenerationRequest("functional", 0, 1))
    text = prompt.system + prompt.user
    assert "Metal Shading Language" in text or "compile_shader" in text
    assert "simd_sum(sum)" in text  # the example's kernel
    assert "Apple M2 Pro" in text and "as a string passed to torch.mps.compile_shader" in text


def test_a_reply_in_the_asked_format_yields_the_candidate_with_its_shader():
    solution = shipped_example().solution
    reply = f"The row fits a threadgroup, so:\n\n```python\n{solution}```\n\nOne pass over memory."
    parsed = parse_reply(reply, label="f1")
    assert parsed.candidate is not None and parsed.candidate.entry == "model_new.py"
    (shader,) = shader_strings(parsed.candidate)
    assert "kernel void rmsnorm" in shader.value and shader.exact
    assert parsed.candidate.source.splitlines()[shader.line - 1].startswith("SOURCE = ")
