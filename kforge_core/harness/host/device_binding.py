"""Binding a harness's workers to one unit of the backend's device (``kforge bench --devices 0,1``), and the
variables the device's runtime wants set in every worker (``Device.runtime_environment``).

The backend's device names the environment variable that shows a process only some units
(``Device.visible_devices_env``, for example ``CUDA_VISIBLE_DEVICES``); each worker, and each build-ahead child,
starts with it set to its unit. Inside, the unit is the device's first one, so candidates, the reference and every
tool a plugin starts use it alike.
"""

from __future__ import annotations

import os
from typing import Mapping

from ...devices import device_class_of
from ...errors import KForgeError
from ...records import Backend


def device_environment(backend: Backend, index: int | None,
                       environ: Mapping[str, str] | None = None) -> tuple[tuple[str, str], ...]:
    """The variables a worker of ``backend``'s device starts with: the device's ``runtime_environment`` (those the
    user has not set), then the one that binds it to unit ``index`` (none for ``index`` None).

    Where the binding variable is already set (``CUDA_VISIBLE_DEVICES=2,3``), ``index`` counts among the units it
    shows. On the host CPU an index only names a slot: nothing is set for it.
    """
    environ = os.environ if environ is None else environ
    if index is not None and index < 0:
        raise KForgeError(f"device index {index} is negative")
    try:
        device = device_class_of(backend)
    except ValueError as exc:
        if index is None:
            return ()
        raise KForgeError(str(exc)) from None
    runtime = tuple((name, value) for name, value in device.runtime_environment if name not in environ)
    if index is None:
        return runtime
    name = device.visible_devices_env
    if not name:
        if device.host_cpu:
            return runtime
        raise KForgeError(f"backend {backend.name!r}'s device ({device.__name__}) cannot bind a process to one "
                          f"{backend.device} device: it names no visible_devices_env",
                          hint="leave out --devices, or ask the plugin's authors to set Device.visible_devices_env")
    shown = [part.strip() for part in environ.get(name, "").split(",") if part.strip()]
    if shown:
        if index >= len(shown):
            raise KForgeError(f"device index {index} is out of range: {name}={environ[name]} shows {len(shown)}")
        return (*runtime, (name, shown[index]))
    return (*runtime, (name, str(index)))
