"""KForge's ``metal`` backend: Metal Shading Language kernels for Apple GPUs, compiled at run time with
``torch.mps.compile_shader`` and dispatched from ``ModelNew``.

Every hook lives in the module that does its work (backend, availability, lowering, compile_stage, profile_stage,
summary); this package only gathers them so that the ``kforge`` entry point registers them all, and the core routes
them here only for ``metal``. The device the harness drives is
:class:`~kforge_metal.device.MetalDevice` (``METAL.device_class``). Importing this package imports neither torch
nor any candidate code, so a machine without an Apple GPU still loads the plugin and ``kforge backends`` says why
the backend is unavailable.
"""

from .availability import kforge_backend_availability
from .backend import METAL, MetalOptions, kforge_register_backends
from .compile_stage import kforge_compile
from .device import kforge_device_namespaces
from .lowering import kforge_lower
from .profile_stage import kforge_profile
from .summary import kforge_summarize_profile

__all__ = [
    "METAL",
    "MetalOptions",
    "kforge_backend_availability",
    "kforge_compile",
    "kforge_device_namespaces",
    "kforge_lower",
    "kforge_profile",
    "kforge_register_backends",
    "kforge_summarize_profile",
]
