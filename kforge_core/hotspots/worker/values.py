"""The values a module is called with, as a problem can take them: tensors and plain values, in tuples, lists and
dicts; a key-value cache (transformers' ``Cache``) as the keys and values it held for the module's layer."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from ...model_worker.outputs import leaves as tensor_leaves


@dataclass(frozen=True)
class CacheSnapshot:
    """What a key-value cache held for one layer before the call: ``keys`` and ``values`` (``[batch, kv heads,
    past length, head dim]``, None before the layer's first update); ``cache_class`` the cache's class."""

    keys: Any
    values: Any
    cache_class: str

    @property
    def past_length(self) -> int:
        return 0 if self.keys is None else int(self.keys.shape[-2])


def is_cache(value: Any) -> bool:
    """A transformers key-value cache (by its class's ancestry: transformers need not be imported)."""
    return any(c.__name__ == "Cache" and c.__module__.startswith("transformers") for c in type(value).__mro__)


def clone_value(value: Any, layer_idx: int | None) -> Any:
    """A copy that later calls cannot change: tensors cloned, containers rebuilt, a cache snapshot taken."""
    import torch

    if isinstance(value, torch.Tensor):
        return value.detach().clone()
    if isinstance(value, tuple):
        return tuple(clone_value(v, layer_idx) for v in value)
    if isinstance(value, list):
        return [clone_value(v, layer_idx) for v in value]
    if isinstance(value, dict):
        return {k: clone_value(v, layer_idx) for k, v in value.items()}
    if is_cache(value):
        keys, values = _layer_state(value, layer_idx)
        return CacheSnapshot(keys, values, type(value).__name__)
    return value


def _layer_state(cache: Any, layer_idx: int | None) -> tuple[Any, Any]:
    if layer_idx is None:
        return None, None
    layers = getattr(cache, "layers", None)
    if layers is not None:  # transformers 5: one object per layer
        if layer_idx >= len(layers):
            return None, None
        layer = layers[layer_idx]
        keys, values = getattr(layer, "keys", None), getattr(layer, "values", None)
    else:  # transformers 4: lists of tensors
        key_cache, value_cache = getattr(cache, "key_cache", []), getattr(cache, "value_cache", [])
        if layer_idx >= len(key_cache):
            return None, None
        keys, values = key_cache[layer_idx], value_cache[layer_idx]
    if keys is None or getattr(keys, "numel", lambda: 0)() == 0:
        return None, None
    return keys.detach().clone(), values.detach().clone()


def first_tensor(value: Any) -> Any:
    leaves = tensor_leaves(value)
    return leaves[0] if leaves else None
