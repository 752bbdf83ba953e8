"""The peaks of a device type for ``kforge check PROBLEM --device TYPE``: those of the device here (its vendor's
figures, or measured once and cached), or with ``--gpu NAME`` the published figures of a device that is not here."""

from __future__ import annotations

from pathlib import Path

from ..devices import device_class_of, make_device
from ..devices.harness_device import named_units
from ..errors import KForgeError
from ..peaks import DevicePeaks
from ..registry import BackendRegistry


def device_peaks(registry: BackendRegistry, device_type: str, name: str | None, cache_dir: Path,
                 remeasure: bool = False) -> tuple[DevicePeaks, bool]:
    """The peaks of ``device_type`` and whether its cache gets flushed before each timed run: the published
    figures of the device called ``name``, or, without a name, the local device's (``remeasure``: what was measured
    of it is measured again)."""
    backends = [b.backend for b in registry.all() if b.backend.device == device_type]
    if not backends:
        known = sorted({b.backend.device for b in registry.all()})
        raise KForgeError(f"no installed backend runs on device {device_type!r}",
                          hint=f"devices of the installed backends: {', '.join(known)}")
    backend = backends[0]
    device_class = device_class_of(backend)
    if name is not None:
        peaks = device_class.stated_peaks(name)
        if peaks is None:
            known = ", ".join(device_class.stated_devices()) or "none"
            raise KForgeError(f"no published figures for a {device_type} device called {name!r}",
                              hint=f"devices with published figures: {known}")
        return named_units(device_class, peaks), device_class.flushes_caches
    try:
        device = make_device(backend)
        device.start()
    except Exception as exc:  # noqa: BLE001 - no such device here: the runtime's own words say why
        known = ", ".join(device_class.stated_devices())
        raise KForgeError(f"no {device_type} device here to ask for its peaks ({type(exc).__name__}: {exc})",
                          hint="name the device with --gpu NAME" + (f" ({known})" if known else "")) from None
    peaks = device.peaks(cache_dir, remeasure=remeasure)
    if peaks is None:
        raise KForgeError(f"the {device.hardware_name()} states no peaks and they could not be measured")
    return peaks, device_class.flushes_caches

