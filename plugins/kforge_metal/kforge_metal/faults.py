"""What the MPS runtime and the Metal driver say when the GPU, not the candidate's Python, went wrong.

Metal reports a failed command buffer with an ``MTLCommandBufferError`` whose text names the cause
(``kIOGPUCommandBufferCallbackErrorPageFault`` for an out-of-bounds access, ``...Timeout`` for a kernel the
watchdog stopped, ``...InnocentVictim`` for work discarded while the GPU recovered, ``...OutOfMemory``); PyTorch's
MPS allocator says "MPS backend out of memory". A kernel that does not exist in a compiled library, or a library
that does not compile, is not a runtime fault: the compile stage reports those.
"""

from __future__ import annotations

from kforge_core.records import Failure

OUT_OF_MEMORY_PATTERNS = (
    "mps backend out of memory",
    "kiogpucommandbuffercallbackerroroutofmemory",
    "insufficient memory",
)
DEVICE_FAULT_PATTERNS = (
    "kiogpucommandbuffercallbackerror",  # page fault, timeout, innocent victim, submissions ignored, ...
    "command buffer exited with error status",
    "gpu address fault",
    "gpu timeout error",
    "mtlcommandbuffererror",
    "internal error (0000000e",
)


def classify_fault_text(text: str) -> Failure | None:
    """OUT_OF_MEMORY or DEVICE_FAULT when ``text`` is the MPS runtime's or Metal's report of one, else None."""
    lowered = text.lower()
    if any(pattern in lowered for pattern in OUT_OF_MEMORY_PATTERNS):
        return Failure.OUT_OF_MEMORY
    if any(pattern in lowered for pattern in DEVICE_FAULT_PATTERNS):
        return Failure.DEVICE_FAULT
    return None


def classify_fault(exc: BaseException) -> Failure | None:
    """The failure class of an exception raised while the candidate ran on the GPU, when it is a device's."""
    if type(exc).__name__ == "OutOfMemoryError":
        return Failure.OUT_OF_MEMORY
    return classify_fault_text(f"{type(exc).__name__}: {exc}")
