"""The model ``kforge integrate`` works on: a factory (``package.module:build_model`` returning the module and its
example inputs, as a problem's ``get_inputs`` does) or a Hugging Face model built from its config with random
weights (speed does not need trained ones)."""

from __future__ import annotations

import importlib
import sys
from dataclasses import dataclass
from typing import Any


@dataclass
class LoadedModel:
    model: Any
    inputs: tuple[Any, ...]
    causal_lm: bool
    description: str


def load_model(spec: str, device: str, dtype: str, prompt_tokens: int, workdir: str, batch: int = 1) -> LoadedModel:
    """The model on ``device`` in ``dtype``, with its example inputs (a causal LM's: ``batch`` random prompts of
    ``prompt_tokens``)."""
    import torch

    if is_factory(spec):
        loaded = _from_factory(spec, workdir)
    else:
        loaded = _from_hugging_face(spec, prompt_tokens, batch)
    torch_dtype = getattr(torch, dtype)
    loaded.model = loaded.model.to(device=device, dtype=torch_dtype).eval()
    loaded.inputs = tuple(_to(x, device, torch_dtype) for x in loaded.inputs)
    return loaded


def is_factory(spec: str) -> bool:
    """``package.module:function``, not a path or a model id."""
    return ":" in spec and not spec.startswith(("/", "."))


def _to(value: Any, device: str, dtype: Any) -> Any:
    import torch

    if isinstance(value, torch.Tensor):
        return value.to(device=device, dtype=dtype if value.is_floating_point() else value.dtype)
    return value


def _from_factory(spec: str, workdir: str) -> LoadedModel:
    module_name, _, function = spec.partition(":")
    if workdir and workdir not in sys.path:
        sys.path.insert(0, workdir)
    factory = getattr(importlib.import_module(module_name), function)
    result = factory()
    if not (isinstance(result, tuple) and len(result) == 2):
        raise TypeError(f"{spec} must return (module, inputs); it returned {type(result).__name__}")
    model, inputs = result
    return LoadedModel(model, tuple(inputs), False, spec)


def _from_hugging_face(spec: str, prompt_tokens: int, batch: int) -> LoadedModel:
    import torch

    try:
        from transformers import AutoConfig, AutoModelForCausalLM
    except ImportError:
        raise RuntimeError(f"{spec} names a Hugging Face model, which needs the transformers package: pip install "
                           "'kforge-core[transformers]', or give a factory (package.module:build_model)") from None
    config = AutoConfig.from_pretrained(spec)
    model = AutoModelForCausalLM.from_config(config)
    generator = torch.Generator().manual_seed(0)
    input_ids = torch.randint(0, config.vocab_size, (batch, prompt_tokens), generator=generator,
                              device="cpu")
    return LoadedModel(model, (input_ids,), True, f"{spec} ({type(model).__name__}, random weights)")
