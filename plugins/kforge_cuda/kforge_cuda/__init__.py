"""KForge's ``cuda`` backend: CUDA C++ kernels on NVIDIA GPUs, built by nvcc into a cached library (``load_cuda``,
:mod:`kforge_cuda.runtime`) and launched from ``ModelNew``.

The language's own parts are here (its options, lowering and prompt, ``load_cuda`` and its build configuration,
building ahead); the GPU, the compile stage, compute-sanitizer and Nsight Compute are the NVIDIA layer's
(``kforge_nvidia``), and the build cache, ``load_inline``'s cache, the compile log and the C signatures are CUDA C++'s
(``kforge_core.languages.cuda_cpp``). Every hook lives in the module that does its work; this package only gathers
them so that the ``kforge`` entry point (``cuda = "kforge_cuda"``) registers them all. Importing it imports neither
torch nor any candidate code.
"""

from kforge_nvidia.profile_stage import kforge_summarize_profile
from kforge_nvidia.source_checks import kforge_device_namespaces, kforge_source_checks

from .availability import kforge_backend_availability
from .backend import CUDA, kforge_register_backends
from .lowering import kforge_lower
from .options import CudaOptions
from .prebuild import kforge_prebuild
from .stages import kforge_compile, kforge_profile, kforge_verify

__all__ = [
    "CUDA",
    "CudaOptions",
    "kforge_backend_availability",
    "kforge_compile",
    "kforge_device_namespaces",
    "kforge_lower",
    "kforge_prebuild",
    "kforge_profile",
    "kforge_register_backends",
    "kforge_source_checks",
    "kforge_summarize_profile",
    "kforge_verify",
]
