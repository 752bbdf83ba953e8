"""KForge's ``xpu`` backend: Triton kernels on Intel GPUs (Arc B-series, Data Center GPU Max) through PyTorch's
XPU build.

Every hook lives in its own module; this package only gathers them so that the ``kforge`` entry point
(``xpu = "kforge_xpu"``) registers them all. Importing it imports neither Triton nor ``torch.xpu``'s runtime: a
machine without an Intel GPU still loads the plugin, and ``kforge backends`` says why the backend is unavailable.
"""

from .availability import kforge_backend_availability
from .backend import XPU, XpuOptions, kforge_register_backends
from .compile_stage import kforge_compile
from .device import kforge_device_namespaces
from .lowering import kforge_lower
from .profile_stage import kforge_profile
from .summary import kforge_summarize_profile

__all__ = [
    "XPU",
    "XpuOptions",
    "kforge_backend_availability",
    "kforge_compile",
    "kforge_device_namespaces",
    "kforge_lower",
    "kforge_profile",
    "kforge_register_backends",
    "kforge_summarize_profile",
]
