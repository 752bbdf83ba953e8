"""The ``toy`` backend: PyTorch candidates on the toy device, a device type of its own.

Everything device-specific is in ``device.py``, and what the cheat checks must know of it in ``checks.py`` (its
cache-pinning call, its runtime module); every stage is the core's generic one, and the lowering below is all the
agent loop needs besides.
"""

from kforge_core import Availability, Backend, Example, Lowering, hookimpl

from .checks import kforge_device_namespaces, kforge_source_checks
from .device import ToyDevice

TOY = Backend(name="toy", programming_model="PyTorch", device="toy", device_class=ToyDevice,
              description="PyTorch candidates on the toy device")


@hookimpl
def kforge_register_backends(register):
    register(TOY)


@hookimpl
def kforge_backend_availability(backend):
    return Availability.yes("the toy device is always there")


EXAMPLE_PROBLEM = """import torch


class Model(torch.nn.Module):
    def forward(self, x):
        return x * 2
"""
EXAMPLE_SOLUTION = """import numpy as np
import torch


class ModelNew(torch.nn.Module):
    def forward(self, x):
        return torch.from_numpy(x.numpy() * np.float32(2))
"""


@hookimpl
def kforge_lower(backend):
    if backend.name != TOY.name:
        return None
    return Lowering(backend=TOY.name, hardware="the Toy Accelerator T1 (its memory is the host's)",
                    programming_model="Write ModelNew with NumPy on the tensors' host memory: the toy device runs "
                                      "NumPy code as its kernels; PyTorch operators are the reference's.",
                    example=Example(problem=EXAMPLE_PROBLEM, solution=EXAMPLE_SOLUTION))
