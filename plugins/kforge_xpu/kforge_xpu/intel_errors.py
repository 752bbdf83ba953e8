"""Reading the errors of Intel's GPU stack: Level Zero (``ZE_RESULT_*``), the SYCL runtime's Unified Runtime
(``UR_RESULT_*``) and its older plugin interface (``PI_ERROR_*``), and Intel's Triton backend (``IntelGPUError``,
``ocloc`` build logs, ``OutOfResources`` for shared local memory and per-thread scratch space).

Two questions are answered: is a runtime error a device fault (after which the worker's device cannot be trusted
and the worker is replaced) or an out-of-memory (the patterns :class:`~kforge_xpu.device.XpuDevice` hands the
core), and is an exception from a kernel's first launch a build failure (a compile error, with a log trimmed for
the model)? Intel's Triton prints a Level Zero result by name, in hex or in decimal
(``Triton Error [ZE]: 0x70000001``, ``... : 1879048193``), so each result is matched in all three spellings.
"""

from __future__ import annotations

from kforge_core.languages import triton as triton_language

# Level Zero results (ze_api.h) by their code.
DEVICE_LOST, OUT_OF_HOST_MEMORY, OUT_OF_DEVICE_MEMORY = 0x70000001, 0x70000002, 0x70000003
MODULE_BUILD_FAILURE, MODULE_LINK_FAILURE, DEVICE_REQUIRES_RESET = 0x70000004, 0x70000005, 0x70000006


def _codes(*codes: int) -> tuple[str, ...]:
    """A result code as Intel's Triton prints it: hex and decimal."""
    return tuple(spelling for code in codes for spelling in (f"0x{code:x}", f": {code}"))


# Lower case: the core matches them against the lower-cased error text.
DEVICE_FAULT_PATTERNS = (
    "ze_result_error_device_lost", "ze_result_error_device_requires_reset", "ur_result_error_device_lost",
    "pi_error_device_not_available", "gpu hang", "device lost", *_codes(DEVICE_LOST, DEVICE_REQUIRES_RESET),
)
OUT_OF_MEMORY_PATTERNS = (
    "ze_result_error_out_of_device_memory", "ze_result_error_out_of_host_memory",
    "ur_result_error_out_of_device_memory", "ur_result_error_out_of_host_memory", "ur_result_error_out_of_resources",
    "pi_error_out_of_resources", "pi_error_out_of_host_memory", "pi_error_mem_object_allocation_failure",
    *_codes(OUT_OF_HOST_MEMORY, OUT_OF_DEVICE_MEMORY),
)
BUILD_FAILURE_PATTERNS = (
    "ze_result_error_module_build_failure", "ze_result_error_module_link_failure",
    "ur_result_error_program_build_failure", "pi_error_build_program_failure", "l0 build module failed",
    *_codes(MODULE_BUILD_FAILURE, MODULE_LINK_FAILURE),
)
INTEL_BUILD_ERRORS = ("IntelGPUError",)  # Intel's Triton: ocloc failed, or the module did not load


def _mentions(text: str, patterns: tuple[str, ...]) -> bool:
    lowered = text.lower()
    return any(pattern in lowered for pattern in patterns)


def is_build_failure(exc: BaseException) -> bool:
    """Whether ``exc`` is Triton or Intel's toolchain failing to build a kernel (not the kernel failing to run)."""
    text = str(exc)
    if _mentions(text, DEVICE_FAULT_PATTERNS + OUT_OF_MEMORY_PATTERNS):
        return False
    if triton_language.is_build_error(exc):
        return True
    kind = type(exc)
    if kind.__module__.startswith("triton") and kind.__name__ in INTEL_BUILD_ERRORS:
        return True
    return _mentions(text, BUILD_FAILURE_PATTERNS)


def build_failure(exc: BaseException) -> BaseException | None:
    """The build failure in ``exc`` or in what caused it, if any."""
    seen: BaseException | None = exc
    while seen is not None:
        if is_build_failure(seen):
            return seen
        seen = seen.__cause__ or seen.__context__
    return None


def build_log(exc: BaseException) -> str:
    """The failure as the model should read it: Triton's message with its source excerpt, or ocloc's errors
    without the repro command line, and what to change for the Xe resource limits."""
    lines = [line for line in f"{type(exc).__name__}: {exc}".splitlines()
             if not line.lstrip().startswith("Repro command:")]
    text = triton_language.trim_error("\n".join(lines))
    if "per-thread scratch space" in text:
        text += ("\nOn Xe this means the kernel's registers spilled past the scratch space: use smaller tiles, fewer "
                 "live values, or the 256-register mode (grf_mode) with num_warps <= 32.")
    elif "out of resource: shared memory" in text:
        text += ("\nOn Xe, shared local memory is the per-work-group SLM: use smaller tiles or fewer stages, or "
                 "avoid the layout conversions that stage through it.")
    return text
