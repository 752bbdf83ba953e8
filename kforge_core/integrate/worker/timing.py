"""End-to-end timing with the harness's method: warm-up runs, then timed runs, each after the device's cache flush
and a device-wide synchronize, the clock stopped after another synchronize; the median is the figure."""

from __future__ import annotations

import inspect
import statistics
from typing import Any, Callable


def median_ms(call: Callable[[], Any], device: Any, warmup: int, repetitions: int) -> float:
    import torch

    with torch.no_grad():
        for _ in range(warmup):
            call()
        device.synchronize()
        samples = []
        for _ in range(repetitions):
            device.flush_caches()
            device.synchronize()
            elapsed = device.start_timer()
            call()
            device.synchronize()
            samples.append(elapsed())
    return statistics.median(samples)


def timing_method(device: Any, warmup: int, repetitions: int) -> dict[str, Any]:
    return {"device": device.label, "warmup": warmup, "repetitions": repetitions,
            "l2_flush_bytes": device.flush_bytes, "synchronize": device.synchronize_description,
            "timer": device.timer_description, "figure": "median"}


def causal_lm_throughput(model: Any, input_ids: Any, decode_tokens: int, device: Any, warmup: int,
                         repetitions: int) -> dict[str, float]:
    """Prefill tokens/s (one forward over the prompt) and decode tokens/s (``decode_tokens`` steps of one token
    each, with the key-value cache), greedy."""
    import torch

    batch, prompt = input_ids.shape

    def prefill() -> Any:
        return model(input_ids=input_ids, use_cache=True)

    # transformers 5 calls the key-value cache ``cache``; earlier versions ``past_key_values``
    cache_name = "cache" if "cache" in inspect.signature(model.forward).parameters else "past_key_values"

    def decode() -> None:
        out = model(input_ids=input_ids, use_cache=True)
        cache, token = getattr(out, cache_name), out.logits[:, -1:].argmax(-1)
        for _ in range(decode_tokens):
            out = model(input_ids=token, use_cache=True, **{cache_name: cache})
            cache, token = getattr(out, cache_name), out.logits[:, -1:].argmax(-1)

    prefill_ms = median_ms(prefill, device, warmup, repetitions)
    with_decode_ms = median_ms(decode, device, max(1, warmup // 2), max(3, repetitions // 2))
    decode_ms = max(with_decode_ms - prefill_ms, 1e-9)
    return {"prefill_ms": prefill_ms, "prefill_tokens_per_s": batch * prompt / (prefill_ms / 1e3),
            "decode_ms": decode_ms, "decode_tokens_per_s": batch * decode_tokens / (decode_ms / 1e3)}
