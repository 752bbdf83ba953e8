"""Trimming DSL and MLIR errors, on what the CuTe DSL 4.8.1 really raised for the kernels in dsl_errors/
(recorded by record_dsl_errors.py into fixtures/dsl_*.json; each fixture says how)."""

from kforge_core.tracebacks import CandidateLine
from kforge_cute.dsl_errors import (
    MAX_CHARS, ErrorPart, describe_dsl_error, error_chain, is_dsl_error, names_candidate, split_location,
)

from cute_testing import recorded_error


def test_verifier_failure_names_the_candidate_lines_not_the_ir(tmp_path):
    chain, located = recorded_error("copy_shape_mismatch", tmp_path)
    assert "see current operation" in chain[-1].message  # what the raw error holds
    text = describe_dsl_error(chain, tmp_path, located)
    lines = text.splitlines()
    assert lines[0].startswith("MLIR verification failed: 'cute.copy' op expects same size in rank 0")
    assert "srcShape: (64,(1)) and dstShape: (4,(1))" in lines[0]
    assert lines[1].startswith("  at copy_shape_mismatch.py:10 in first_kernel: cute.copy(")
    assert lines[2].startswith("  called from copy_shape_mismatch.py:16 in launch:")
    assert "cute_nvgpu" not in text and "memref" not in text and str(tmp_path) not in text
    assert "site-packages" not in text and len(lines) == 3


def test_verifier_failure_without_the_retry_still_gives_the_message(tmp_path):
    chain, _ = recorded_error("copy_shape_mismatch", tmp_path)
    text = describe_dsl_error(chain, tmp_path)
    assert text.startswith("MLIR verification failed: 'cute.copy' op expects same size") and "%14" not in text


def test_dsl_diagnostic_keeps_its_excerpt_without_colour_or_paths(tmp_path):
    chain, located = recorded_error("type_unstable", tmp_path)
    assert "\x1b[" in chain[0].message and not located
    text = describe_dsl_error(chain, tmp_path)
    assert text.startswith("error[TYPE_UNSTABLE_JOIN]: `total` has type `Int32` on one path and `Float32`")
    assert "--> type_unstable.py:10" in text and "for i in range(4):" in text
    assert "\x1b[" not in text and str(tmp_path) not in text and "Traceback" not in text


def test_name_error_in_a_kernel_points_at_its_line(tmp_path):
    chain, _ = recorded_error("name_error", tmp_path)
    text = describe_dsl_error(chain, tmp_path)
    assert "NameError" in text and "undefined_scale" in text and "--> name_error.py:9" in text


def test_an_excerpt_of_code_outside_the_candidate_is_replaced_by_the_candidates_frames(tmp_path):
    chain, _ = recorded_error("missing_jit", tmp_path)
    assert "compile_cache.py" in chain[0].message  # the DSL took KForge's frame for the author's
    own = CandidateLine("model_new.py", 31, "forward", "compiled = cute.compile(launch, x, y)")
    chain = (ErrorPart(chain[0].kind, chain[0].message, (own,)), *chain[1:])
    text = describe_dsl_error(chain, tmp_path)
    assert text.startswith("error[CALL_MISSING_JIT_DECORATOR]") and "compile_cache.py" not in text
    assert "at model_new.py:31 in forward: compiled = cute.compile(launch, x, y)" in text


def test_split_location_handles_nested_callsites_and_quotes():
    location, message = split_location('callsite("k"("a.py":8:4 to :90) at "b(c).py":1:2): op failed: why')
    assert location.startswith("callsite(") and message == "op failed: why"
    assert split_location("unknown: bad op") == ("", "bad op")
    assert split_location("no location here") == ("", "no location here")


def test_a_python_exception_from_traced_code_shows_the_candidate_frames(tmp_path):
    source = tmp_path / "model_new.py"
    source.write_text("def kernel():\n    return 1 + 'x'\nkernel()\n")
    try:
        exec(compile(source.read_text(), str(source), "exec"), {})
    except TypeError as exc:
        chain = error_chain(exc, tmp_path)
    text = describe_dsl_error(chain, tmp_path)
    assert text.splitlines()[0].startswith("TypeError: unsupported operand")
    assert "  at model_new.py:2 in kernel" in text and "called from model_new.py:3" in text
    assert not is_dsl_error(chain) and names_candidate(chain, tmp_path) is False


def test_which_errors_are_the_dsls():
    assert is_dsl_error((ErrorPart("cutlass.base_dsl.common.DSLUserCodeError", "x"),))
    assert is_dsl_error((ErrorPart("builtins.RuntimeError", "x"), ErrorPart("cutlass._mlir.ir.MLIRError", "y")))
    # a CUDA error at launch or run time is not a compile error
    assert not is_dsl_error((ErrorPart("cutlass.base_dsl.common.DSLCudaRuntimeError", "x"),))


def test_long_messages_are_clipped():
    text = describe_dsl_error((ErrorPart("cutlass.base_dsl.common.DSLRuntimeError", "x" * 20_000),), None)
    assert len(text) <= MAX_CHARS and text.endswith("(message truncated)")
