"""The layers of the kernel packages ``kforge integrate`` was given: an exported package through
``kernels.get_local_kernel``, a package made from runs by importing it as it is."""

from __future__ import annotations

import importlib.util
import json
import sys
from dataclasses import dataclass
from pathlib import Path
from types import ModuleType
from typing import Any

from ..request import KernelPackage


@dataclass
class LoadedKernel:
    name: str
    layer: type
    package: ModuleType
    metadata: dict[str, Any]  # the package's metadata.json ``kforge.kernels`` entry
    loaded_with: str


def load_kernels(packages: tuple[KernelPackage, ...]) -> dict[str, LoadedKernel]:
    kernels: dict[str, LoadedKernel] = {}
    for spec in packages:
        if spec.through_kernels:
            import kernels as hf_kernels

            module = hf_kernels.get_local_kernel(Path(spec.path))
            how = "kernels.get_local_kernel"
        else:
            module = _import_directly(Path(spec.module_dir))
            how = "imported from the run's candidate"
        metadata = _metadata(Path(module.__file__).parent.parent / "metadata.json")
        package_name = Path(module.__file__).parent.name
        for name, layer_name in module.KERNELS.items():
            key = name if name not in kernels else f"{package_name}.{name}"  # two packages with one problem
            kernels[key] = LoadedKernel(name, getattr(module.layers, layer_name), module, metadata.get(name, {}),
                                         how)
    return kernels


def _import_directly(package_dir: Path) -> ModuleType:
    name = f"_kforge_integrate_{package_dir.name}"
    if name in sys.modules:
        return sys.modules[name]
    spec = importlib.util.spec_from_file_location(name, package_dir / "__init__.py",
                                                  submodule_search_locations=[str(package_dir)])
    assert spec is not None and spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    sys.modules[name] = module
    spec.loader.exec_module(module)
    return module


def _metadata(path: Path) -> dict[str, dict[str, Any]]:
    if not path.is_file():
        return {}
    data = json.loads(path.read_text())
    return {k["name"]: k for k in data.get("kforge", {}).get("kernels", [])}
