"""What the MPS runtime and the Metal driver say when the GPU, not the candidate's Python, went wrong.

Metal reports a failed command buffer ("command buffer exited with error status") with the cause in a
``kIOGPUCommandBufferCallbackError...`` code: ``PageFault`` for an access outside any buffer, ``Timeout`` for a
kernel the watchdog stopped, ``InnocentVictim`` for work discarded while the GPU recovered, ``OutOfMemory``. Any
of them is a device fault: the queue's work is lost and the worker is replaced. PyTorch's MPS allocator refusing
an allocation ("MPS backend out of memory") is out of memory. A kernel missing from a compiled library, or a
library that does not compile, is not a runtime fault: the compile stage reports those.
"""

from __future__ import annotations

FAULT_PATTERNS = (
    "command buffer exited with error status",
    "kiogpucommandbuffercallbackerror",  # PageFault, Timeout, InnocentVictim, SubmissionsIgnored, OutOfMemory, ...
    "gpu address fault",
    "gpu timeout error",
)
OUT_OF_MEMORY_PATTERNS = ("mps backend out of memory",)
