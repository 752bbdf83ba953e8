"""KForge's ``triton`` backend: ``@triton.jit`` kernels on NVIDIA GPUs, launched from ``ModelNew``.

A thin backend over two shared layers: Triton as a language (``kforge_core.languages.triton``: the programming
model, the example, the first call, Triton's errors and cache, shared with ``xpu``) and the NVIDIA layer
(``kforge_nvidia``: the GPU, the compile stage, compute-sanitizer, Nsight Compute). Every hook lives in the module
that does its work; this package only gathers them so that the ``kforge`` entry point (``triton =
"kforge_triton"``) registers them all. Importing it imports neither Triton, torch nor any candidate code.
"""

from kforge_nvidia.profile_stage import kforge_summarize_profile
from kforge_nvidia.source_checks import kforge_device_namespaces, kforge_source_checks

from .availability import kforge_backend_availability
from .backend import TRITON, TritonOptions, kforge_register_backends
from .lowering import kforge_lower
from .stages import kforge_compile, kforge_profile, kforge_verify

__all__ = [
    "TRITON",
    "TritonOptions",
    "kforge_backend_availability",
    "kforge_compile",
    "kforge_device_namespaces",
    "kforge_lower",
    "kforge_profile",
    "kforge_register_backends",
    "kforge_source_checks",
    "kforge_summarize_profile",
    "kforge_verify",
]
