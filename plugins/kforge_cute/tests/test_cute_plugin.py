"""The plugin as KForge sees it: registration, the lowering the generation agent reads, the example, and how a
reply written for it becomes a candidate."""

import ast

from kforge_core.agents.reply_parser import parse_reply
from kforge_core.registry import BackendRegistry
from kforge_core.plugins import PluginSelection, build_plugin_manager
from kforge_core.problem import load_problem
from kforge_cute import CUTE
from kforge_cute.availability import cute_availability
from kforge_cute.lowering import lower
from kforge_cute.options import CuteOptions

from cute_testing import EXAMPLES


def test_the_backend_is_registered_by_its_distribution():
    registry = BackendRegistry(build_plugin_manager(PluginSelection(only=("cute",))))
    entry = registry.get("cute")
    assert entry.backend == CUTE and entry.backend.device == "cuda"
    assert entry.distribution == "kforge-cute"
    assert isinstance(entry.backend.default_options(), CuteOptions)


def test_the_lowering_teaches_the_dsl_and_how_modelnew_calls_it():
    lowering = lower(CUTE, load_problem(EXAMPLES / "cute_problem.py"))
    model = lowering.programming_model
    for must in ("@cute.kernel", "@cute.jit", "cute.compile", "from_dlpack(t.detach(), assumed_align=16)",
                 "torch.cuda.current_stream().cuda_stream", "--enable-tvm-ffi",
                 "make_fake_stream(use_tvm_ffi_env_stream=True)", "cutlass.const_expr", "cutlass.range_constexpr",
                 "make_tiled_copy_tv", "warpgroup.MmaF16BF16Op", "make_tiled_tma_atom", "What the DSL cannot do"):
        assert must in model, must
    assert "$" not in model  # every placeholder filled
    assert "sm_90a" in model or "device's architecture" in model
    assert lowering.hardware and "```python" in lowering.reply_format


def test_the_example_is_a_valid_problem_and_a_cute_solution():
    lowering = lower(CUTE, load_problem(EXAMPLES / "cute_problem.py"))
    problem = load_problem(EXAMPLES / "cute_problem.py")
    assert problem.outputs[0].dtype == "float32" and problem.outputs[0].shape == (8192, 4096)
    solution = lowering.example.solution
    tree = ast.parse(solution)
    names = {node.name for node in tree.body if isinstance(node, (ast.FunctionDef, ast.ClassDef))}
    assert {"ModelNew", "add_layernorm", "add_layernorm_kernel", "compile_for"} <= names
    assert "@cute.kernel" in solution and "cute.compile(add_layernorm" in solution and ".launch(" in solution
    assert 'options="--enable-tvm-ffi"' in solution


def test_a_reply_with_cute_code_becomes_a_candidate():
    solution = (EXAMPLES / "cute_solution.py").read_text()
    reply = f"The row stays in registers.\n\n```python\n{solution}```\n"
    parsed = parse_reply(reply, label="f1")
    assert parsed.candidate is not None and parsed.candidate.source.strip() == solution.strip()
    assert parsed.candidate.entry == "model_new.py"


def test_the_core_routes_the_cute_stages_to_this_plugin_and_no_other():
    registry = BackendRegistry(build_plugin_manager(PluginSelection(only=("cute", "cuda"))))
    problem = load_problem(EXAMPLES / "cute_problem.py")
    cute = registry.hooks("cute")
    lowering = cute.caller("lower")(backend=CUTE, problem=problem, options=None, cache_dir=None)
    assert "@cute.kernel" in lowering.programming_model
    assert cute.implements("compile") and cute.implements("profile") and not cute.builds_ahead
    assert "@cute.kernel" not in registry.hooks("cuda").caller("lower")(
        backend=registry.get("cuda").backend, problem=problem, options=None, cache_dir=None).programming_model
    assert registry.availability("cute") == cute_availability()
