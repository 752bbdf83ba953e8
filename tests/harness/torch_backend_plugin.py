"""A test plugin: backends served entirely by the core's generic stage implementations.

``torch-cpu`` runs candidates on the CPU (CI); ``torch-cuda`` on an NVIDIA GPU (the ``gpu`` tests). Tests load it
with ``PluginSelection(entry_points=False, modules=("harness.torch_backend_plugin",))``; workers import it too,
because they see the test process's ``sys.path``.
"""

from __future__ import annotations

from kforge_core import Availability, Backend, hookimpl
from kforge_cuda.device import CudaDevice

TORCH_CPU = Backend(name="torch-cpu", programming_model="PyTorch", device="cpu",
                    description="candidates on the CPU, served by the core's generic stages")
TORCH_CUDA = Backend(name="torch-cuda", programming_model="PyTorch", device="cuda", device_class=CudaDevice,
                     description="candidates on an NVIDIA GPU, served by the core's generic stages")


@hookimpl
def kforge_register_backends(register):
    register(TORCH_CPU)
    register(TORCH_CUDA)


@hookimpl
def kforge_backend_availability(backend):
    if backend.name == TORCH_CPU.name:
        return Availability.yes("the host CPU")
    if backend.name == TORCH_CUDA.name:
        import torch

        if not torch.cuda.is_available():
            return Availability.no("no CUDA device")
        return Availability.yes(torch.cuda.get_device_name())
    return None
