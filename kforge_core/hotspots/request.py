"""What ``kforge hotspots`` asks its worker process to do, as a plain JSON-able record (the worker runs the model,
KForge's process never does)."""

from __future__ import annotations

from dataclasses import asdict, dataclass
from typing import Any


@dataclass(frozen=True)
class HotspotsRequest:
    """:param model: ``package.module:factory``, or a transformers config or checkpoint directory (or model id).
    :param device: the torch device type; ``device_class`` the backend's Device (``module:name``, "" for the base).
    :param batch: sequences in a causal LM's batch; ``prompt_tokens`` their length at prefill.
    :param decode_tokens: decode steps of one request: the decode phase's weight, and the steps timed.
    :param profile_steps: steps of each phase under the profiler.
    :param extract_dir: where the hot groups are written as problems ("" for none); ``save_inputs`` also writes
        each problem's captured inputs, the module's weights and its outputs there.
    :param min_share: the share of a phase's device time a group needs to be extracted.
    :param extra_classes: module classes to treat as groups beside the documented kinds.
    """

    model: str
    backend: str
    programming_model: str
    device: str
    device_class: str
    dtype: str = "float32"
    batch: int = 1
    prompt_tokens: int = 128
    decode_tokens: int = 32
    profile_steps: int = 4
    warmup: int = 2
    repetitions: int = 10
    extract_dir: str = ""
    save_inputs: bool = False
    min_share: float = 0.01
    extra_classes: tuple[str, ...] = ()
    workdir: str = ""

    def to_json(self) -> dict[str, Any]:
        return asdict(self)

    @classmethod
    def from_json(cls, data: dict[str, Any]) -> HotspotsRequest:
        return cls(**{**data, "extra_classes": tuple(data.get("extra_classes", ()))})
