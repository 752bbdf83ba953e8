"""KForge's ``cpu`` backend: candidates are Numba kernels that run on the host CPU.

Every hook lives in its own module; this package only gathers them so that the ``kforge`` entry point
(``cpu = "kforge_cpu"``) registers them all. Importing it does not import Numba: a machine without Numba still
loads the plugin and ``kforge backends`` says why the backend is unavailable.
"""

from .availability import kforge_backend_availability
from .backend import CPU_BACKEND, CpuOptions, kforge_register_backends
from .compile import kforge_compile
from .lowering import kforge_lower
from .profile import kforge_profile
from .summarize import kforge_summarize_profile

__all__ = [
    "CPU_BACKEND",
    "CpuOptions",
    "kforge_backend_availability",
    "kforge_compile",
    "kforge_lower",
    "kforge_profile",
    "kforge_register_backends",
    "kforge_summarize_profile",
]
