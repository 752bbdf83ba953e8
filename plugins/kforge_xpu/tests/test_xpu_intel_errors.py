"""Telling a kernel that failed to build from one that failed to run, on Intel's stack, and trimming the build
log for the model. The messages are in the forms Intel's Triton writes them (its compiler.py and driver source;
the ocloc text is laid out as compiler.py lays it out, with the PTSS message its pattern looks for) or as public
issue reports quote them."""

import importlib.util

import pytest

from kforge_xpu.intel_errors import build_failure, build_log


def _triton_error(name: str, message: str) -> BaseException:
    """An exception of the class Intel's Triton raises (triton.runtime.errors.<name>), without importing Triton."""
    kind = type(name, (RuntimeError,), {"__module__": "triton.runtime.errors"})
    return kind(message)


OCLOC_FAILURE = """`ocloc` failed with error code 1
`ocloc` stderr:
error: total scratch space exceeds HW supported limit for kernel kernel_0: 282624 bytes (max permitted PTSS 262144 bytes)
error: backend compiler failed build.
Build failed with error code: -11
Command was: ocloc compile -file /tmp/tmpab/kernel.spv -o /tmp/tmpab/kernel.spv.o -spirv_input -device bmg
Repro command: ['ocloc', 'compile', '-file', '/tmp/tmpab/kernel.spv', '-o', '/tmp/tmpab/kernel.spv.o']
"""


def test_an_ocloc_failure_is_a_build_failure_with_its_errors_and_no_repro_line():
    exc = _triton_error("IntelGPUError", OCLOC_FAILURE)
    assert build_failure(exc) is exc
    log = build_log(exc)
    assert log.startswith("IntelGPUError: `ocloc` failed with error code 1")
    assert "total scratch space exceeds HW supported limit" in log
    assert "Repro command" not in log


def test_a_module_build_failure_found_behind_the_exception_that_wraps_it():
    cause = RuntimeError("Triton Error [ZE]: 0x70000004")  # as older Intel Triton releases raised it
    try:
        try:
            raise cause
        except RuntimeError as inner:
            raise ValueError("the forward failed") from inner
    except ValueError as outer:
        assert build_failure(outer) is cause
    decimal = RuntimeError("Error during Intel loadBinary: Triton Error [ZE]: 1879048196")  # 0x70000004
    assert build_failure(decimal) is decimal


def test_a_device_lost_at_launch_is_not_a_build_failure():
    exc = _triton_error("IntelGPUError", "Triton Error [ZE] /tmp/main.cpp:197: ZE_RESULT_ERROR_DEVICE_LOST")
    assert build_failure(exc) is None
    assert build_failure(RuntimeError("index 5 is out of bounds")) is None


@pytest.mark.skipif(importlib.util.find_spec("triton") is None, reason="triton not installed")
def test_out_of_shared_local_memory_says_what_to_change_on_xe():
    from triton.runtime.errors import OutOfResources

    exc = OutOfResources(98304, 65536, "shared memory")
    assert build_failure(exc) is exc
    log = build_log(exc)
    assert "Required: 98304, Hardware limit: 65536" in log and "per-work-group SLM" in log
    ptss = build_log(OutOfResources(282624, 262144, "per-thread scratch space (PTSS)"))
    assert "grf_mode" in ptss and "num_warps <= 32" in ptss


def test_a_long_log_is_cut_as_the_shared_triton_support_cuts_it():
    exc = _triton_error("CompilationError", "\n".join(f"line {i}" for i in range(100)))
    log = build_log(exc)
    assert log.splitlines()[0] == "CompilationError: line 0" and log.splitlines()[-1] == "line 39"
