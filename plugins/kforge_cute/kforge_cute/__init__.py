"""KForge backend for NVIDIA Hopper and Blackwell GPUs in the CuTe DSL: ``cute``.

The language's own parts are here (its options, availability, lowering and prompt, the compile cache, the DSL's
errors, the child program Nsight Compute runs); the device, Nsight Compute's runner, parser and summary are the
NVIDIA layer's (``kforge_nvidia``), and verification the core's generic one. Every hook lives in the module that does
its work; this package only gathers them so that the ``kforge`` entry point (``cute = "kforge_cute"``) registers them
all. Importing it imports neither the DSL nor any candidate code.
"""

from kforge_nvidia.profile_stage import kforge_summarize_profile
from kforge_nvidia.source_checks import kforge_device_namespaces, kforge_source_checks

from .availability import kforge_backend_availability
from .backend import CUTE, kforge_register_backends
from .compile_stage import kforge_compile
from .lowering import kforge_lower
from .profile_stage import kforge_profile

__all__ = [
    "CUTE",
    "kforge_backend_availability",
    "kforge_compile",
    "kforge_device_namespaces",
    "kforge_lower",
    "kforge_profile",
    "kforge_register_backends",
    "kforge_source_checks",
    "kforge_summarize_profile",
]
