"""The ``toy`` backend: PyTorch candidates on the toy device, a device type of its own.

Everything device-specific is in ``device.py``, and what the cheat checks must know of it in ``checks.py`` (its
cache-pinning call, its runtime module); every stage is the core's generic one.
"""

from kforge_core import Availability, Backend, hookimpl

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
