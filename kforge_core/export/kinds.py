"""What kind of kernel a candidate is, whether the ``kernels`` format can carry it, and the build variant it needs.

The format lets a kernel depend on torch (Triton comes with it) and on the few Python packages ``kernels`` lists in
its ``python_depends.json``; anything else (Numba, NumPy, a KForge plugin's runtime) cannot be declared, so such a
kernel is refused with the module that stops it.
"""

from __future__ import annotations

import json
import platform
import sys
from dataclasses import dataclass
from importlib import resources

from .model_new import ModelNewShape

UNIVERSAL = "torch-universal"
_ALWAYS_ALLOWED = {"torch", "triton", "__future__"}
# imports that come with a dependency the format lists: CuTe DSL's package brings the CUDA Python bindings
_COMES_WITH = {"cutlass": ("cuda",)}
# torch device type -> the backend name ``kernels`` gives its noarch variants
_KERNELS_BACKEND = {"cuda": "cuda", "xpu": "xpu", "mps": "metal", "cpu": "cpu"}


@dataclass(frozen=True)
class KernelKind:
    """:param kind: ``pytorch``, ``triton``, ``cute``, ``cuda-cpp`` or ``numba``.
    :param variant: the build variant directory it needs (``torch-universal``, ``torch-cuda``,
        ``torch29-cxx11-cu128-x86_64-linux``); empty when refused.
    :param python_depends: the ``kernels`` dependency names it declares (``nvidia-cutlass-dsl``).
    :param refused: why the format cannot carry it; empty when it can.
    """

    kind: str
    variant: str
    python_depends: tuple[str, ...] = ()
    refused: str = ""


def kernel_kind(shape: ModelNewShape, source: str, device: str) -> KernelKind:
    """The kind of a candidate whose ModelNew has ``shape``, run on torch device type ``device``."""
    imports = set(shape.imports)
    compiled = "kforge_cuda" in imports or "load_inline" in source or "cpp_extension" in source
    kind = ("numba" if "numba" in imports else "cute" if "cutlass" in imports else "triton" if "triton" in imports
            else "cuda-cpp" if compiled else "pytorch")
    backend = _KERNELS_BACKEND.get(device, device)
    declared, refused = _dependencies(imports, backend)
    if refused:
        return KernelKind(kind, "", (), refused)
    if kind == "pytorch":
        return KernelKind(kind, UNIVERSAL, declared)
    if kind == "cuda-cpp":
        variant, why = compiled_variant()
        return KernelKind(kind, variant, declared, why)
    return KernelKind(kind, f"torch-{backend}", declared)


def _dependencies(imports: set[str], backend: str) -> tuple[tuple[str, ...], str]:
    """The dependencies to declare, and why the imports cannot all be declared ("" when they can)."""
    allowed = allowed_imports(backend)
    stdlib = set(sys.stdlib_module_names)
    implied = {name for dependency in imports & set(allowed) for name in _COMES_WITH.get(dependency, ())}
    outside = sorted(name for name in imports if name not in stdlib and name not in _ALWAYS_ALLOWED
                     and name not in allowed and name not in implied)
    own = [name for name in outside if name.startswith("kforge")]
    if own:
        return (), (f"imports {', '.join(own)}, KForge's own build-and-load runtime, which an exported package "
                    "does not carry")
    if outside:
        listed = ", ".join(sorted(allowed)) or "none"
        return (), (f"imports {', '.join(outside)}, which a kernels package cannot depend on (it may use torch, "
                    f"triton and, on {backend}, these listed packages: {listed})")
    return tuple(sorted({allowed[name] for name in imports if name in allowed})), ""


def allowed_imports(backend: str) -> dict[str, str]:
    """Import name -> dependency name, for the packages ``kernels`` lets a kernel on ``backend`` declare."""
    try:
        text = resources.files("kernels").joinpath("python_depends.json").read_text()
    except (ModuleNotFoundError, FileNotFoundError):
        return {}
    data = json.loads(text)
    allowed: dict[str, str] = {}
    for table in (data.get("general", {}), data.get("backends", {}).get(backend, {})):
        for dependency, info in table.items():
            for package in info.get("python", []):
                if package.get("import"):
                    allowed[package["import"]] = dependency
    return allowed


def compiled_variant() -> tuple[str, str]:
    """The arch variant a CUDA C++ kernel built here gets (``torch29-cxx11-cu128-x86_64-linux``), or why none."""
    import torch

    cuda = torch.version.cuda
    if not cuda:
        return "", "a CUDA C++ kernel needs a CUDA build of torch to name its compiled variant; this torch has none"
    major, minor = torch.__version__.split("+")[0].split(".")[:2]
    cu = "".join(cuda.split(".")[:2])
    abi = "cxx11" if torch.compiled_with_cxx11_abi() else "cxx98"
    return f"torch{major}{minor}-{abi}-cu{cu}-{platform.machine()}-linux", ""


def package_variant(variants: list[str]) -> str:
    """The one variant a package of kernels needing ``variants`` is built as: the most specific (a universal
    kernel also runs inside a CUDA variant); a ValueError when two specific ones differ."""
    specific = sorted({v for v in variants if v != UNIVERSAL})
    compiled = [v for v in specific if not v.startswith("torch-")]
    noarch = [v for v in specific if v.startswith("torch-")]
    if len(compiled) > 1 or len(noarch) > 1 or (compiled and noarch and not _same_backend(compiled[0], noarch[0])):
        raise ValueError(f"these kernels need different build variants ({', '.join(specific)}); export them apart")
    return (compiled or noarch or [UNIVERSAL])[0]


def _same_backend(compiled: str, noarch: str) -> bool:
    return noarch == "torch-cuda" and "-cu" in compiled
