"""Reading the errors of Intel's GPU stack: Level Zero (``ZE_RESULT_*``), the SYCL runtime's Unified Runtime
(``UR_RESULT_*``) and its older plugin interface (``PI_ERROR_*``), and Intel's Triton backend (``IntelGPUError``,
``ocloc`` build logs, ``OutOfResources`` for shared local memory and per-thread scratch space).

Two questions are answered: is a runtime error a device fault (after which the process's device context cannot
be trusted and the worker must be replaced) or an out-of-memory, and is an exception from a kernel's first launch
a build failure (a compile error, with a log trimmed for the model)?
"""

from __future__ import annotations

import re

from kforge_core.records import Failure

# Level Zero result codes (ze_api.h), as Intel's Triton prints them: hex, decimal or by name.
ZE_CODES = {
    0x70000001: "ZE_RESULT_ERROR_DEVICE_LOST",
    0x70000002: "ZE_RESULT_ERROR_OUT_OF_HOST_MEMORY",
    0x70000003: "ZE_RESULT_ERROR_OUT_OF_DEVICE_MEMORY",
    0x70000004: "ZE_RESULT_ERROR_MODULE_BUILD_FAILURE",
    0x70000005: "ZE_RESULT_ERROR_MODULE_LINK_FAILURE",
    0x70000006: "ZE_RESULT_ERROR_DEVICE_REQUIRES_RESET",
}
DEVICE_FAULT_NAMES = (
    "ZE_RESULT_ERROR_DEVICE_LOST", "ZE_RESULT_ERROR_DEVICE_REQUIRES_RESET", "UR_RESULT_ERROR_DEVICE_LOST",
    "PI_ERROR_DEVICE_NOT_AVAILABLE", "GPU HANG", "DEVICE LOST",
)
OUT_OF_MEMORY_NAMES = (
    "ZE_RESULT_ERROR_OUT_OF_DEVICE_MEMORY", "ZE_RESULT_ERROR_OUT_OF_HOST_MEMORY",
    "UR_RESULT_ERROR_OUT_OF_DEVICE_MEMORY", "UR_RESULT_ERROR_OUT_OF_HOST_MEMORY", "UR_RESULT_ERROR_OUT_OF_RESOURCES",
    "PI_ERROR_OUT_OF_RESOURCES", "PI_ERROR_OUT_OF_HOST_MEMORY", "PI_ERROR_MEM_OBJECT_ALLOCATION_FAILURE",
    "XPU OUT OF MEMORY",
)
BUILD_FAILURE_NAMES = ("ZE_RESULT_ERROR_MODULE_BUILD_FAILURE", "ZE_RESULT_ERROR_MODULE_LINK_FAILURE",
                       "UR_RESULT_ERROR_PROGRAM_BUILD_FAILURE", "PI_ERROR_BUILD_PROGRAM_FAILURE",
                       "L0 BUILD MODULE FAILED")
# Triton's own build errors, on every backend, and Intel's.
TRITON_BUILD_ERRORS = ("CompilationError", "CompileTimeAssertionFailure", "OutOfResources",
                       "UnsupportedLanguageConstruct", "IntelGPUError")
_ZE_CODE = re.compile(r"Triton Error \[ZE\][^:\n]*(?::\d+)?:\s*(0x[0-9a-fA-F]+|\d+)")
MAX_LOG_LINES = 40


def ze_names(text: str) -> tuple[str, ...]:
    """The Level Zero result names a message carries, its numeric codes translated."""
    names = []
    for match in _ZE_CODE.finditer(text):
        value = match.group(1)
        code = int(value, 16) if value.lower().startswith("0x") else int(value)
        if code in ZE_CODES:
            names.append(ZE_CODES[code])
    return tuple(names)


def _mentions(text: str, names: tuple[str, ...]) -> bool:
    upper = (text + " " + " ".join(ze_names(text))).upper()
    return any(name in upper for name in names)


def classify_runtime_error(text: str) -> Failure | None:
    """DEVICE_FAULT or OUT_OF_MEMORY when an error's text says so in Intel's runtime's words; else None."""
    if _mentions(text, DEVICE_FAULT_NAMES):
        return Failure.DEVICE_FAULT
    if _mentions(text, OUT_OF_MEMORY_NAMES):
        return Failure.OUT_OF_MEMORY
    return None


def is_build_failure(exc: BaseException) -> bool:
    """Whether ``exc`` is Triton or Intel's toolchain failing to build a kernel (not the kernel failing to run)."""
    text = str(exc)
    if classify_runtime_error(text) is not None:
        return False
    kind = type(exc)
    if kind.__module__.startswith("triton") and kind.__name__ in TRITON_BUILD_ERRORS:
        return True
    return _mentions(text, BUILD_FAILURE_NAMES)


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
    lines = [line.rstrip() for line in f"{type(exc).__name__}: {exc}".splitlines() if line.strip()]
    lines = [line for line in lines if not line.lstrip().startswith("Repro command:")]
    if len(lines) > MAX_LOG_LINES:
        lines = lines[:MAX_LOG_LINES] + [f"... ({len(lines) - MAX_LOG_LINES} more lines)"]
    text = "\n".join(lines)
    if "per-thread scratch space" in text:
        text += ("\nOn Xe this means the kernel's registers spilled past the scratch space: use smaller tiles, fewer "
                 "live values, or the 256-register mode (grf_mode) with num_warps <= 32.")
    elif "out of resource: shared memory" in text:
        text += ("\nOn Xe, shared local memory is the per-work-group SLM: use smaller tiles or fewer stages, or "
                 "avoid the layout conversions that stage through it.")
    return text
