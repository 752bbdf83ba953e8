"""The backend's device, built in the worker from the names a request carries, with the harness's policy around
it."""

from __future__ import annotations

import importlib
from typing import Any


def backend_device(request: Any) -> Any:
    """The backend's device (a :class:`~kforge_core.devices.harness_device.HarnessDevice`) for a request naming
    ``backend``, ``programming_model``, ``device`` and ``device_class``."""
    from ..device import Device
    from ..devices.harness_device import HarnessDevice
    from ..records import Backend

    device_class = Device
    if request.device_class:
        module_name, _, name = request.device_class.partition(":")
        device_class = getattr(importlib.import_module(module_name), name)
    return HarnessDevice(device_class(Backend(name=request.backend, programming_model=request.programming_model,
                                              device=request.device)))
