"""What every NVIDIA backend's availability starts from: is there a CUDA device this torch can use, and which.
Answers, never exceptions.

Asked in KForge's own process before its workers start, so it imports no torch: torch's build is read from the
``torch/version.py`` it installed, the device from the driver (:mod:`.driver`). It says no where
``torch.cuda.is_available()`` would: a torch built without CUDA, no driver, no GPU, a driver older than torch's CUDA.
"""

from __future__ import annotations

import ast
import importlib.util
from dataclasses import dataclass
from importlib.machinery import PathFinder
from pathlib import Path

from .driver import device_count, driver_device, driver_version


@dataclass(frozen=True)
class TorchBuild:
    """The installed torch as its ``torch/version.py`` records it."""

    version: str
    cuda: str | None  # the CUDA version it was built with ("13.0"); None: built without CUDA


def installed_torch(search_path: list[str] | None = None) -> TorchBuild | None:
    """The torch that ``import torch`` would find on ``search_path`` (``sys.path`` by default), read without
    importing it; None where there is none or its version file cannot be read."""
    spec = PathFinder.find_spec("torch", search_path)
    if spec is None and search_path is None:  # installed where only another finder looks (finding imports nothing)
        spec = importlib.util.find_spec("torch")
    if spec is None or not spec.submodule_search_locations:
        return None
    try:
        tree = ast.parse((Path(list(spec.submodule_search_locations)[0]) / "version.py").read_text())
    except (OSError, SyntaxError, ValueError):
        return None
    values = _constants(tree)
    version, cuda = values.get("__version__"), values.get("cuda")
    if not isinstance(version, str):
        return None
    return TorchBuild(version, cuda if isinstance(cuda, str) else None)


def _constants(tree: ast.Module) -> dict[str, object]:
    """The names a module binds to a literal at its top level (``cuda: Optional[str] = '13.0'``)."""
    values: dict[str, object] = {}
    for node in tree.body:
        if isinstance(node, ast.Assign) and len(node.targets) == 1:
            target = node.targets[0]
        elif isinstance(node, ast.AnnAssign):
            target = node.target
        else:
            continue
        if isinstance(target, ast.Name) and isinstance(node.value, ast.Constant):
            values[target.id] = node.value.value
    return values


def _major_minor(version: int) -> str:
    return f"{version // 1000}.{version % 1000 // 10}"


def device_problem() -> str | None:
    """Why no NVIDIA GPU can be used here, or None when one can."""
    torch = installed_torch()
    if torch is None:
        return "no CUDA device can be used: torch is not installed (pip install torch)"
    if torch.cuda is None:
        return f"no CUDA device (this torch {torch.version} is built without CUDA)"
    supported = driver_version()
    if supported is None:
        return "no CUDA device (no NVIDIA driver: libcuda.so.1 cannot be loaded)"
    if not device_count():
        return "no CUDA device"
    needed = torch.cuda.split(".")[0]
    if needed.isdigit() and supported // 1000 < int(needed):
        return (f"no CUDA device this torch can use: the NVIDIA driver supports CUDA {_major_minor(supported)}, "
                f"torch {torch.version} needs CUDA {torch.cuda} (update the driver)")
    return None


def device_detail() -> str:
    """GPU 0 in one line: name, architecture, SMs, the CUDA version torch was built with."""
    device = driver_device(0)
    torch = installed_torch()
    cuda = torch.cuda if torch is not None else "unknown"
    if device is None:
        return f"an NVIDIA GPU, CUDA {cuda}"
    major, minor = device.capability
    return f"{device.name}, sm_{major}{minor}, {device.sm_count} SMs, CUDA {cuda}"
