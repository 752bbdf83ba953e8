"""The harness's small parts on their own: comparison, static check, flags and policies, fault classes, the
environment, captured output, operator classes, precision, settings."""

from __future__ import annotations

import math
import os
import signal
import subprocess
import sys

import pytest
import torch

from kforge_core.config import load_settings
from kforge_core.harness import flags as F
from kforge_core.harness.captured import read_truncated
from kforge_core.harness.host.deadline import (
    CALL_FLOOR_S, CALL_MULTIPLE, STAGE_ALLOWANCE_S, StageDeadline, StageTimeouts, WaitLimits,
)
from kforge_core.harness.host.exits import classify_exit
from kforge_core.harness.host.sandbox import worker_environment
from kforge_core.harness.host.static_check import check_source
from kforge_core.harness.op_trace import compute_ops, is_compute_op, op_name, trace_ops
from kforge_core.timing.timed_runs import parse_timed_label, pool_seeds, timed_label, timed_run_seed
from kforge_core.harness.worker.compare import check_structure, compare_outputs
from kforge_core.harness.worker.faults import classify_exception
from kforge_core.harness.worker.precision import agreement_bits
from kforge_core.records import Backend, Candidate, Failure
from kforge_core.secrets import is_secret, secret_values
from kforge_core.settings import HarnessSettings
from kforge_core.tolerances import tolerance_in_effect

from .helpers import problem

# ------------------------------------------------------------------------------------------------ comparison


def test_compare_passes_within_tolerance_and_reports_the_worst_element():
    ref = torch.zeros(4, 5)
    out = ref.clone()
    out[2, 3] = 0.5
    assert compare_outputs([ref.clone()], [ref], [(1e-4, 1e-4)]).passed
    result = compare_outputs([out], [ref], [(1e-4, 1e-4)])
    assert result.failure is Failure.MISMATCH and result.max_abs_error == 0.5
    assert "1 of 20 elements" in result.message and "at [2, 3]" in result.message


def test_compare_nan_where_the_reference_has_nan_is_fine_elsewhere_not():
    ref = torch.tensor([1.0, math.nan, 3.0])
    assert compare_outputs([ref.clone()], [ref], [(1e-4, 1e-4)]).passed
    bad = compare_outputs([torch.tensor([math.nan, math.nan, 3.0])], [ref], [(1e-4, 1e-4)])
    assert bad.failure is Failure.NAN_INF
    assert compare_outputs([torch.tensor([1.0, math.nan, math.inf])], [ref], [(1e-4, 1e-4)]).failure is \
        Failure.NAN_INF


def test_compare_integers_exactly_and_structure_first():
    ref = torch.tensor([1, 2, 3])
    assert compare_outputs([torch.tensor([1, 2, 4])], [ref], [(0.0, 0.0)]).failure is Failure.MISMATCH
    assert check_structure([torch.zeros(3, dtype=torch.int32)], [ref]).failure is Failure.DTYPE
    assert check_structure([torch.zeros(4, dtype=torch.int64)], [ref]).failure is Failure.SHAPE
    assert check_structure([ref, ref], [ref]).failure is Failure.OUTPUT_TYPE
    assert check_structure([[1, 2, 3]], [ref]).failure is Failure.OUTPUT_TYPE

    class Sub(torch.Tensor):
        pass

    assert "tensor subclass" in check_structure([ref.as_subclass(Sub)], [ref]).message


def test_nested_outputs_must_nest_as_the_reference_does_and_are_compared_leaf_by_leaf():
    ref = torch.ones(2)
    nested = ((None, (None, None)))  # output 0 is a tensor, output 1 a pair of tensors
    assert check_structure([ref, ref, ref], [ref, ref, ref], structure=((None, (None, None))),
                           reference_structure=nested) is None
    flat = check_structure([ref, ref, ref], [ref, ref, ref], structure=(None, None, None),
                           reference_structure=nested)
    assert flat.failure is Failure.OUTPUT_TYPE and "the reference (tensor, (tensor, tensor))" in flat.message
    wrong = compare_outputs([ref, ref, ref * 2], [ref, ref, ref], [(1e-4, 1e-4)] * 3, nested)
    assert wrong.failure is Failure.MISMATCH and wrong.message.startswith("output 1[1]: ")


# ------------------------------------------------------------------------------------------------ static check


def _flags(source: str, problem_name: str = "relu_scale") -> dict[str, str]:
    found = check_source(Candidate.from_source(source), problem(problem_name))
    assert all(not f.blocking and f.message.startswith("source: ") for f in found)
    return {f.code: f.message for f in found}


def test_static_check_sees_torch_compute_calls_through_aliases_but_not_allocation():
    found = _flags("import torch\nimport torch.nn.functional as F\nfrom torch import matmul\n"
                   "def forward(x, w):\n    y = torch.empty_like(x)\n    z = x.view(-1)\n"
                   "    return F.gelu(matmul(x, w)) + torch.zeros(1)\n")
    assert found.keys() == {F.REFERENCE_CALL}
    assert "calls torch.nn.functional.gelu (line 7)" in found[F.REFERENCE_CALL]
    assert "calls torch.matmul (line 7)" in found[F.REFERENCE_CALL]
    assert "empty_like" not in found[F.REFERENCE_CALL] and "zeros" not in found[F.REFERENCE_CALL]


def test_static_check_sees_tampering_threads_and_precision_and_knows_no_devices_api():
    found = _flags(
        "import time, threading, torch, gc\nimport kforge_core.harness\n"
        "time.perf_counter = lambda: 0\nsetattr(torch, 'allclose', None)\n"
        "torch.backends.cuda.matmul.allow_tf32 = True\nthreading.Thread(target=print).start()\n"
        "objs = gc.get_objects()\nx = torch.ones(2).half()\nSRC = 'cudaDeviceSetLimit(cudaLimitPersistingL2CacheSize'\n")
    assert "assigns time.perf_counter" in found[F.TAMPERING] and "setattr on torch" in found[F.TAMPERING]
    assert "imports kforge_core.harness" in found[F.TAMPERING] and "gc.get_objects" in found[F.TAMPERING]
    assert "uses threading.Thread" in found[F.ASYNC_OUTPUT]
    assert "sets torch.backends.cuda.matmul.allow_tf32" in found[F.PRECISION_DOWNGRADE]
    assert ".half()" in found[F.PRECISION_DOWNGRADE]
    assert F.L2_PERSISTENCE not in found  # NVIDIA's APIs are the NVIDIA plugin's to look for (kforge_source_checks)


def test_static_check_does_not_take_parameter_initialisation_in_init_for_the_forward():
    found = _flags("import torch\nclass ModelNew(torch.nn.Module):\n    def __init__(self, n):\n"
                   "        super().__init__()\n        self.w = torch.nn.Parameter(torch.randn(n, n) * 0.02)\n"
                   "        self.b = torch.nn.Parameter(torch.rand(n))\n"
                   "    def forward(self, x):\n        return x + torch.randn(1)\n")
    assert found[F.REFERENCE_CALL] == "source: model_new.py: calls torch.randn (line 8)"


def test_static_check_sees_the_problems_model_unless_the_candidate_defines_one():
    assert "uses the problem's Model" in _flags("def f():\n    return Model(2.0)\n")[F.REFERENCE_CALL]
    assert _flags("class Model:\n    pass\nclass ModelNew(Model):\n    pass\n") == {}


def test_static_check_is_quiet_for_an_honest_numpy_candidate_and_survives_bad_syntax():
    from .helpers import candidate

    assert check_source(candidate("relu_scale_numpy"), problem("relu_scale")) == ()
    assert check_source(candidate("syntax_error"), problem("relu_scale")) == ()


# ------------------------------------------------------------------------------------------------ flags


def test_policies_decide_which_flags_block():
    strict, report = HarnessSettings(), HarnessSettings(cheat_policy="report", precision_policy="report")
    assert F.blocks(F.REFERENCE_CALL, strict) and not F.blocks(F.REFERENCE_CALL, report)
    assert F.blocks(F.INPUT_MUTATION, strict) and not F.blocks(F.INPUT_MUTATION, report)
    assert F.blocks(F.PRECISION_DOWNGRADE, strict) and not F.blocks(F.PRECISION_DOWNGRADE, report)
    for code in (F.STALE_OUTPUT, F.ASYNC_OUTPUT, F.CACHED_OUTPUT, F.CONSTANT_OUTPUT, F.TAMPERING,
                 F.TENSOR_SUBCLASS, F.L2_PERSISTENCE):
        assert F.blocks(code, report)  # these make the measurement itself untrustworthy
    assert not F.blocks(F.INSENSITIVE_PROBLEM, strict)
    with pytest.raises(ValueError):
        F.raise_flag("no_such_flag", "x", strict)


def test_a_block_by_policy_names_the_policy_that_evaluates_such_solutions_instead():
    strict = HarnessSettings()
    reference_call = F.raise_flag(F.REFERENCE_CALL, "ran aten::mm", strict)
    assert F.describe_blocking([reference_call]) == (
        "reference_call: ran aten::mm (--policy report evaluates such solutions and flags the PyTorch calls or the "
        "input changes instead)")
    stale = F.raise_flag(F.STALE_OUTPUT, "output 0 kept the poison", strict)
    assert F.describe_blocking([stale]) == "stale_output: output 0 kept the poison"  # no policy lets that pass


def test_flags_merge_by_code():
    merged = F.merge_flags([F.source_flag(F.REFERENCE_CALL, "calls torch.relu"),
                            F.raise_flag(F.REFERENCE_CALL, "ran aten::relu", HarnessSettings()),
                            F.raise_flag(F.TAMPERING, "x", HarnessSettings())])
    assert [f.code for f in merged] == [F.REFERENCE_CALL, F.TAMPERING]
    assert merged[0].blocking and "calls torch.relu" in merged[0].message and "ran aten::relu" in merged[0].message


# ------------------------------------------------------------------------------------------------ faults


def test_exceptions_are_classified():
    assert classify_exception(ValueError("x")) is Failure.RUNTIME
    assert classify_exception(MemoryError()) is Failure.OUT_OF_MEMORY
    assert classify_exception(RuntimeError("DefaultCPUAllocator: can't allocate memory")) is Failure.OUT_OF_MEMORY
    assert classify_exception(SystemExit(1)) is Failure.EXIT


def test_a_device_classifies_its_runtimes_faults_and_the_core_knows_none():
    from kforge_core.device import Device
    from kforge_core.devices.harness_device import HarnessDevice

    class Lossy(Device):
        torch_type = "cpu"
        fault_patterns = ("device lost",)
        out_of_memory_patterns = ("pool exhausted",)

    device = HarnessDevice(Lossy(Backend(name="lossy", programming_model="x", device="lossy")))
    lost = RuntimeError("UR error: device lost")
    assert classify_exception(lost) is Failure.RUNTIME  # the core alone knows no runtime's words
    assert classify_exception(lost, device) is Failure.DEVICE_FAULT
    assert classify_exception(RuntimeError("the pool exhausted"), device) is Failure.OUT_OF_MEMORY
    assert classify_exception(RuntimeError("can't allocate memory"), device) is Failure.OUT_OF_MEMORY


def test_exits_are_classified():
    assert classify_exit(3, killed_by_harness=False)[0] is Failure.EXIT
    # Python ending on a MemoryError (an address-space limit reached while importing torch): out of memory
    died = ('Traceback (most recent call last):\n  File "torch/nn/parameter.py", line 281, in <module>\n'
            "MemoryError: \nException ignored in: <module 'threading'>\nMemoryError")
    assert classify_exit(1, killed_by_harness=False, stderr_tail=died)[0] is Failure.OUT_OF_MEMORY
    assert classify_exit(1, killed_by_harness=False, stderr_tail="MemoryError\nValueError: no")[0] is Failure.EXIT
    assert classify_exit(3, killed_by_harness=False, stderr_tail="MemoryError")[0] is Failure.EXIT
    assert classify_exit(-signal.SIGSEGV, killed_by_harness=False) == (Failure.CRASH,
                                                                        "the worker crashed with SIGSEGV")
    assert classify_exit(-signal.SIGKILL, killed_by_harness=False, oom_evidence="the OOM killer")[0] is \
        Failure.OUT_OF_MEMORY
    assert classify_exit(-signal.SIGKILL, killed_by_harness=False)[0] is Failure.CRASH
    assert "file size limit" in classify_exit(-signal.SIGXFSZ, killed_by_harness=False)[1]


# ------------------------------------------------------------------------------------------------ environment


def test_secrets_are_recognized_by_name():
    for name in ("OPENAI_API_KEY", "my_api_key", "GITHUB_TOKEN", "AWS_REGION", "AZURE_TENANT_ID", "DB_PASSWORD",
                 "GOOGLE_APPLICATION_CREDENTIALS", "ANTHROPIC_BASE_URL", "X_SECRET_Y", "HF_TOKEN"):
        assert is_secret(name), name
    for name in ("PATH", "HOME", "CUDA_VISIBLE_DEVICES", "KFORGE_HARNESS__TRIALS", "TOKENIZERS_PARALLELISM"):
        assert not is_secret(name), name


def test_one_secrets_list_serves_the_workers_environment_and_the_stores_redaction(tmp_path):
    for name in ("AWS_ACCESS_KEY_ID", "SSH_PRIVATE_KEY", "NETRC", "OPENAI_API_KEY", "DB_PASSWORD"):
        environ = {name: "value-that-is-secret", "PATH": "/bin"}
        assert name not in worker_environment(environ, tmp_path), name
        assert secret_values(environ) == ("value-that-is-secret",), name


def test_worker_environment_keeps_the_users_build_caches(tmp_path):
    env = worker_environment({"PATH": "/bin", "TORCH_EXTENSIONS_DIR": "/mine", "X_API_KEY": "k"}, tmp_path)
    assert env["TORCH_EXTENSIONS_DIR"] == "/mine" and "X_API_KEY" not in env
    assert env["TORCHINDUCTOR_CACHE_DIR"] == str(tmp_path / "inductor") and env["PYTHONUNBUFFERED"] == "1"


def test_the_inductor_cache_torch_wrote_into_this_process_is_not_handed_to_workers(tmp_path, monkeypatch):
    # Inductor asking for its cache writes torch's default into os.environ; workers started after that took it
    from torch._inductor.runtime import cache_dir_utils

    monkeypatch.delenv("TORCHINDUCTOR_CACHE_DIR", raising=False)
    written = cache_dir_utils.cache_dir()
    assert os.environ["TORCHINDUCTOR_CACHE_DIR"] == written  # what PyTorch does
    assert worker_environment(os.environ, tmp_path)["TORCHINDUCTOR_CACHE_DIR"] == str(tmp_path / "inductor")
    mine = worker_environment({"TORCHINDUCTOR_CACHE_DIR": str(tmp_path / "mine")}, tmp_path)
    assert mine["TORCHINDUCTOR_CACHE_DIR"] == str(tmp_path / "mine")  # the user's own is kept


def test_captured_output_keeps_head_and_tail(tmp_path):
    path = tmp_path / "out.txt"
    path.write_text("HEAD" + "x" * 10_000 + "TAIL")
    with path.open("rb") as handle:
        text = read_truncated(handle.fileno(), 1024)
    assert text.startswith("HEAD") and text.endswith("TAIL") and "bytes cut" in text
    assert len(text) < 1200
    path.write_text("short")
    with path.open("rb") as handle:
        assert read_truncated(handle.fileno(), 1024) == "short"


# ------------------------------------------------------------------------------------------------ operators


def test_operator_names_and_the_allow_list():
    assert op_name("aten::gelu.default") == op_name("aten.gelu.default") == "aten::gelu"
    assert is_compute_op("aten::mm") and is_compute_op("aten::gelu")
    for allowed in ("aten::empty_like", "aten::view", "aten::contiguous", "aten::copy_", "aten::zeros"):
        assert not is_compute_op(allowed)
    assert not is_compute_op("mylib::fused_kernel")  # a candidate's own registered kernel is not PyTorch's


def test_asking_which_dtype_an_output_takes_is_not_computing_it():
    x = torch.randn(4, 4)
    _, names = trace_ops(lambda: torch.empty_like(x, dtype=torch.promote_types(x.dtype, torch.float16)))
    assert "aten::promote_types" in {op_name(n) for n in names} and compute_ops(names) == {}


def test_trace_sees_operators_called_from_python():
    x = torch.randn(4, 4)
    _, names = trace_ops(lambda: torch.nn.functional.gelu(x @ x).contiguous())
    assert compute_ops(names) == {"aten::mm": 1, "aten::gelu": 1}


_TRACE_IN_A_FRESH_PROCESS = """
import sys, torch
from kforge_core.harness.op_trace import trace_ops
x = torch.randn(4, 4)
_, plain = trace_ops(lambda: torch.tanh(x))
dynamo_after_plain = "torch._dynamo" in sys.modules
out, compiled = trace_ops(lambda: torch.compile(lambda a: torch.cos(a) * 2, backend="eager")(x))
_, again = trace_ops(lambda: torch.tanh(x) + 1)
print(plain, dynamo_after_plain, compiled, bool(torch.allclose(out, torch.cos(x) * 2)), again)
"""


def test_the_trace_costs_no_dynamo_import_and_still_sees_a_compile_in_the_call():
    """A process that never compiles does not pay Dynamo's import for the trace; one whose traced call compiles
    still has every operator recorded, and later traces go through Dynamo's skip."""
    found = subprocess.run([sys.executable, "-c", _TRACE_IN_A_FRESH_PROCESS], capture_output=True, text=True,
                           timeout=240, check=True).stdout.strip().splitlines()[-1]
    assert found == "['aten::tanh'] False ['aten::cos', 'aten::mul'] True ['aten::tanh', 'aten::add']"


# ------------------------------------------------------------------------------------------------ precision


def test_agreement_bits_are_the_same_computed_a_piece_at_a_time():
    exact = torch.randn(300, 70, dtype=torch.float64)
    for output in (exact.to(torch.float32), exact.to(torch.float16), exact.to(torch.float32) + 1e-3):
        assert agreement_bits(output, exact, chunk=997) == pytest.approx(agreement_bits(output, exact, chunk=1 << 30),
                                                                         abs=1e-9)
    half = exact.to(torch.float32)
    half[7, 3] = float("nan")  # a non-finite value is left out in every piece alike
    assert agreement_bits(half, exact, chunk=64) == pytest.approx(agreement_bits(half, exact, chunk=1 << 30))
    kept = torch.ones(half.numel(), dtype=torch.bool)
    kept[7 * 70 + 3] = False
    assert agreement_bits(half, exact, chunk=64) == pytest.approx(  # as if the element were not there at all
        agreement_bits(half.reshape(-1)[kept], exact.reshape(-1)[kept], chunk=1 << 30), abs=1e-9)


def test_agreement_bits_tell_float16_from_float32():
    exact = torch.randn(10_000, dtype=torch.float64)
    assert agreement_bits(exact.to(torch.float32), exact) > 22
    assert 9 < agreement_bits(exact.to(torch.float16), exact) < 13
    assert agreement_bits(exact.to(torch.bfloat16), exact) < 10
    assert agreement_bits(exact, exact) == 60.0


# ------------------------------------------------------------------------------------------------ settings


def test_timed_calls_are_named_and_seeded_alike_on_both_sides():
    settings = HarnessSettings(warmup=3, repetitions=20, seed=42)
    assert [timed_label(7, t) for t in ("wall", "events", "device")] == [
        "timed run 7", "timed run 7 (events)", "timed run 7 (device time)"]
    assert [parse_timed_label(timed_label(7, t)) for t in ("wall", "events", "device")] == [
        (7, "wall"), (7, "events"), (7, "device")]
    assert parse_timed_label("warm-up run 0") is None and parse_timed_label("timed run 7 (other)") is None
    assert timed_run_seed(0, settings) == pool_seeds(settings)[3]  # the warm-up runs take the first sets
    assert len(set(pool_seeds(settings))) == 23


def test_harness_settings_from_a_config_file(tmp_path):
    (tmp_path / "kforge.toml").write_text(
        "[harness]\ntrials = 2\ncheat_policy = 'report'\nmemory_limit_mb = 2048\ntimed_check_elements = 1\n"
        "tolerances = { float32 = [1e-3, 1e-3] }\n")
    settings = load_settings(tmp_path, environ={})
    harness = settings.harness
    assert (harness.trials, harness.cheat_policy, harness.memory_limit_mb, harness.timed_check_elements) == \
        (2, "report", 2048, 1)
    assert tolerance_in_effect("float32", harness).pair == (1e-3, 1e-3)
    assert tolerance_in_effect("float32", harness, (("float32", 5e-2, 5e-2),)).pair == (1e-3, 1e-3)
    assert tolerance_in_effect("float16", harness, (("float16", 5e-2, 5e-2),)).pair == (5e-2, 5e-2)
    assert tolerance_in_effect("int64", harness).pair == (0.0, 0.0)
    backend = (("float32", 5e-2, 5e-2), ("float16", 3e-2, 3e-2))
    user = tolerance_in_effect("float32", harness, backend, "cpu")  # each says where it came from
    assert (user.atol, user.rtol, user.atol_from) == (1e-3, 1e-3, "[harness.tolerances]")
    assert tolerance_in_effect("float16", harness, backend, "cpu").atol_from == "the cpu backend's default"
    assert tolerance_in_effect("bfloat16", harness).atol_from == "the harness's default"
    with pytest.raises(ValueError, match="verify_timeout_s"):
        HarnessSettings(verify_timeout_s=-1)


def test_explicit_atol_and_rtol_win_over_every_table_and_the_contract_each_on_its_own():
    settings = HarnessSettings(tolerances={"float32": (1e-3, 1e-3)}, atol=0.5, precision="bf16")
    tolerance = tolerance_in_effect("float32", settings, (("float32", 5e-2, 5e-2),), "cpu")
    assert (tolerance.atol, tolerance.rtol) == (0.5, 1e-3)  # --atol over the table; the table's rtol stays
    assert tolerance.describe() == "atol=0.5, rtol=0.001 (--atol/--rtol; rtol [harness.tolerances])"
    assert tolerance_in_effect("float32", settings).pair == (0.5, 1e-3)  # what the harness and the prompts use is the same rule
    contract = tolerance_in_effect("float32", HarnessSettings(rtol=0.25, precision="bf16"))
    assert contract.describe() == "atol=0.02, rtol=0.25 (the bf16 precision contract; rtol --atol/--rtol)"
    exact = tolerance_in_effect("int32", HarnessSettings(rtol=0.25))
    assert (exact.atol, exact.rtol) == (0.0, 0.25)


# ------------------------------------------------------------------------------------------------ device


def test_poisoned_memory_is_what_an_unwritten_cpu_output_holds():
    # In a fresh process, as in a worker (configured the same way), with a heap cluttered by earlier work.
    code = """
import torch
from kforge_core.devices import make_device
from kforge_core.devices.cpu import configure_host_allocator
from kforge_core.records import Backend

configure_host_allocator()
ops = make_device(Backend(name="x", programming_model="PyTorch", device="cpu"))
poisoned_fraction = ops.poisoned_fraction
for size in range(64):
    clutter = [torch.randn(100 + size * 7) for _ in range(10)] + [torch.randn(1000 + size, 100)]
    ops.poison([256 * 256 * 4])
    unwritten = [torch.empty(256, 256), torch.empty(64 << 20 // 4)]  # from the heap, and a fresh mapping
    ops.stop_poisoning()
    assert min(poisoned_fraction(t) for t in unwritten) == 1.0, size
    del clutter, unwritten
assert poisoned_fraction(torch.zeros(256, 256)) == 0.0
print("ok")
"""
    result = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True)
    assert result.stdout.strip() == "ok", result.stderr


_RELEASE_IN_A_FRESH_PROCESS = """
import torch, torch._dynamo
import torch._dynamo.convert_frame as convert_frame
from kforge_core.devices import make_device
from kforge_core.records import Backend

resets, reset = [], torch._dynamo.reset
torch._dynamo.reset = lambda: resets.append(1) or reset()
ops = make_device(Backend(name="x", programming_model="PyTorch", device="cpu"))
ops.release_memory()
idle = len(resets)
torch.compile(lambda a: a.sin() + 1, backend="eager")(torch.randn(3))
compiled = convert_frame.FRAME_COUNTER
ops.release_memory()
print(idle, compiled, len(resets), convert_frame.FRAME_COUNTER)
"""


def test_releasing_memory_resets_dynamo_only_after_it_compiled():
    """Between problems a worker resets what torch.compile keeps; where nothing was compiled, the reset (which
    imports Inductor, seconds) is skipped."""
    found = subprocess.run([sys.executable, "-c", _RELEASE_IN_A_FRESH_PROCESS], capture_output=True, text=True,
                           timeout=240, check=True).stdout.strip().splitlines()[-1]
    assert found == "0 1 1 0"


# ------------------------------------------------------------------------------------------------ deadlines


def test_stage_timeouts_follow_the_reference_unless_set():
    derived = StageTimeouts.derive(HarnessSettings(trials=5, warmup=3, repetitions=20), reference_s=0.002)
    assert derived.call_s == CALL_FLOOR_S and derived.build_s == derived.compile_s == 600
    assert derived.verify_s == STAGE_ALLOWANCE_S + 9 * CALL_FLOOR_S
    assert derived.timing_s == STAGE_ALLOWANCE_S + 23 * CALL_FLOOR_S
    slow = StageTimeouts.derive(HarnessSettings(), reference_s=3.0)
    assert slow.call_s == CALL_MULTIPLE * 3.0
    fixed = StageTimeouts.derive(HarnessSettings(call_timeout_s=2, verify_timeout_s=7, timing_timeout_s=8), 3.0)
    assert (fixed.call_s, fixed.verify_s, fixed.timing_s) == (2, 7, 8)


def test_a_call_has_its_own_limit_and_builds_inside_it_do_not_count():
    deadline = StageDeadline("compile", 600, WaitLimits(call_s=10, build_s=100), start=0.0)
    assert deadline.expires() == (600, "compile did not finish within 600 s")
    deadline.enter("call", "the first forward", now=5)
    at, message = deadline.expires()
    assert at == 15 and message.startswith("the first forward did not return within 10 s")
    deadline.enter("build", "Numba compiling k(float32)", now=7)
    at, message = deadline.expires()
    assert at == 107 and message.startswith("Numba compiling k(float32) did not finish within 100 s")
    deadline.leave(now=37)  # 30 s of JIT: the call's limit moves by as much
    assert deadline.expires()[0] == 45
    deadline.leave(now=40)
    assert deadline.expires() == (630, "compile did not finish within 600 s")  # the stage's, moved by the build


def test_the_builds_of_a_request_share_one_budget_and_waits_without_limits_change_nothing():
    deadline = StageDeadline("verify", 60, WaitLimits(call_s=10, build_s=100), start=0.0)
    deadline.enter("build", "load_inline of a", now=0)
    deadline.leave(now=80)
    deadline.enter("build", "load_inline of b", now=81)
    at, message = deadline.expires()
    assert at == 101 and "with the builds before it, building took more than 100 s" in message
    plain = StageDeadline("verify", 60, None, start=0.0)
    plain.enter("build", "x", now=1)
    assert plain.expires() == (60, "verify did not finish within 60 s")
