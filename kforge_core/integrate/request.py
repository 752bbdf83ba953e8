"""What ``kforge integrate`` asks its worker process to do, as plain JSON-able records (the worker runs the model,
KForge's process never does)."""

from __future__ import annotations

from dataclasses import asdict, dataclass, field
from typing import Any


@dataclass(frozen=True)
class Mapping:
    """``--map Layer=kernel[:attribute=path,...]``: swap ``kernel`` into every module of class ``layer``, reading
    ModelNew's ``attribute`` at ``path`` on the module."""

    layer: str
    kernel: str
    aliases: tuple[tuple[str, str], ...] = ()


@dataclass(frozen=True)
class KernelPackage:
    """A package of layers: ``path`` is its directory; ``through_kernels`` loads it with
    ``kernels.get_local_kernel`` (an exported package), else its Python package at ``module_dir`` is imported as
    it is (kernels straight from runs, Numba ones included)."""

    path: str
    through_kernels: bool
    module_dir: str = ""


@dataclass(frozen=True)
class IntegrateRequest:
    """:param model: ``package.module:factory`` or a Hugging Face model id or local path.
    :param device: the torch device type (``cpu``, ``cuda``); ``device_class`` the backend's Device (module:name).
    :param tolerances: ``(dtype, atol, rtol)`` the outputs are held to (the precision contract's rule).
    :param dtype: the dtype the model runs in (``float32``).
    :param hotspots: ``kforge hotspots``' model.json: each swapped class is also timed alone at each phase's
        shape and profiled inside the untouched and the swapped model (``phases`` in the report).
    """

    model: str
    packages: tuple[KernelPackage, ...]
    mappings: tuple[Mapping, ...]
    backend: str
    programming_model: str
    device: str
    device_class: str
    precision: str
    tolerances: tuple[tuple[str, float, float], ...]
    warmup: int = 3
    repetitions: int = 10
    dtype: str = "float32"
    prompt_tokens: int = 128
    decode_tokens: int = 32
    batch: int = 1
    workdir: str = ""
    hotspots: dict[str, Any] | None = None  # a model.json of kforge hotspots: the phases' figures are measured too
    extra: dict[str, Any] = field(default_factory=dict)

    def to_json(self) -> dict[str, Any]:
        return asdict(self)

    @classmethod
    def from_json(cls, data: dict[str, Any]) -> IntegrateRequest:
        data = dict(data)
        data["packages"] = tuple(KernelPackage(**p) for p in data["packages"])
        data["mappings"] = tuple(Mapping(m["layer"], m["kernel"], tuple(tuple(a) for a in m["aliases"]))
                                 for m in data["mappings"])
        data["tolerances"] = tuple(tuple(t) for t in data["tolerances"])
        return cls(**data)


def parse_mapping(text: str) -> Mapping:
    """``LlamaRMSNorm=rmsnorm`` or ``LlamaRMSNorm=rmsnorm:eps=variance_epsilon,weight=weight``."""
    layer, sep, rest = text.partition("=")
    kernel, _, alias_text = rest.partition(":")
    if not sep or not layer.strip() or not kernel.strip():
        raise ValueError(f"--map {text!r}: expected Layer=kernel or Layer=kernel:attribute=path,...")
    aliases = []
    for item in filter(None, alias_text.split(",")):
        attribute, eq, path = item.partition("=")
        if not eq or not attribute.strip():
            raise ValueError(f"--map {text!r}: alias {item!r} is not attribute=path")
        aliases.append((attribute.strip(), path.strip()))
    return Mapping(layer.strip(), kernel.strip(), tuple(aliases))
