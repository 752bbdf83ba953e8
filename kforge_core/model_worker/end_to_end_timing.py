"""End-to-end timing with the harness's method: warm-up runs, then timed runs, each after the device's cache flush
and a device-wide synchronize, the clock stopped after another synchronize; the median is the figure.

The model with and without the kernels are timed run by run in turn (after an untimed switch between them), so
that a drift in clocks or in the machine's load falls on both alike.
"""

from __future__ import annotations

import inspect
import statistics
from typing import Any, Callable

# one way of running: (switch to it, untimed; the timed call)
Variant = tuple[Callable[[], None], Callable[[], Any]]


def paired_medians(variants: list[Variant], device: Any, warmup: int, repetitions: int) -> list[float]:
    """The median milliseconds of each variant, the variants' timed runs taken in turn."""
    return [statistics.median(s) for s in paired_samples(variants, device, warmup, repetitions)]


def spread(samples: list[float]) -> float:
    """How much a figure varies from run to run: the interquartile range over the median."""
    if len(samples) < 2:
        return 0.0
    low, _, high = statistics.quantiles(samples, n=4)
    middle = statistics.median(samples)
    return (high - low) / middle if middle else 0.0


def paired_samples(variants: list[Variant], device: Any, warmup: int, repetitions: int) -> list[list[float]]:
    """Each variant's milliseconds, run by run, the variants' timed runs taken in turn."""
    import torch

    samples: list[list[float]] = [[] for _ in variants]
    with torch.no_grad():
        for switch, call in variants:
            switch()
            for _ in range(warmup):
                call()
        device.synchronize()
        for _ in range(repetitions):
            for index, (switch, call) in enumerate(variants):
                switch()
                device.flush_caches()
                device.synchronize()
                elapsed = device.start_timer()
                call()
                device.synchronize()
                samples[index].append(elapsed())
    return samples


def timing_method(device: Any, warmup: int, repetitions: int) -> dict[str, Any]:
    return {"device": device.label, "warmup": warmup, "repetitions": repetitions,
            "l2_flush_bytes": device.flush_bytes, "synchronize": device.synchronize_description,
            "timer": device.timer_description, "figure": "median",
            "order": "untouched and with kernels in turn, run by run"}


def end_to_end(model: Any, inputs: tuple[Any, ...], causal_lm: bool, switches: tuple[Callable[[], None], ...],
               device: Any, warmup: int, repetitions: int, decode_tokens: int) -> list[dict[str, float]]:
    """For each switch (untouched, with kernels): forward milliseconds and, for a causal LM, prefill and decode
    tokens/s (``decode_tokens`` greedy steps of one token with the key-value cache, after the prefill)."""
    figures: list[dict[str, float]] = [{} for _ in switches]
    forward = paired_samples([(s, lambda: model(*inputs)) for s in switches], device, warmup, repetitions)
    for f, ms in zip(figures, forward):
        f["forward_ms"], f["forward_spread"] = statistics.median(ms), spread(ms)
    if not causal_lm:
        return figures
    input_ids = inputs[0]
    batch, prompt = input_ids.shape
    prefill = paired_samples([(s, lambda: model(input_ids=input_ids, use_cache=True)) for s in switches], device,
                             warmup, repetitions)
    decode = _decoder(model, input_ids, decode_tokens)
    with_decode = paired_samples([(s, decode) for s in switches], device, max(1, warmup // 2),
                                 max(3, repetitions // 2))
    for f, prefill_samples, total_samples in zip(figures, prefill, with_decode):
        prefill_ms, total_ms = statistics.median(prefill_samples), statistics.median(total_samples)
        decode_ms = max(total_ms - prefill_ms, 1e-9)
        f.update({"prefill_ms": prefill_ms, "prefill_tokens_per_s": batch * prompt / (prefill_ms / 1e3),
                  "decode_ms": decode_ms, "decode_tokens_per_s": batch * decode_tokens / (decode_ms / 1e3),
                  "prefill_spread": spread(prefill_samples),
                  # the decode figure is a difference: the prefill's variation is in it too
                  "decode_spread": (spread(total_samples) * total_ms + spread(prefill_samples) * prefill_ms)
                  / decode_ms})
    return figures


def cache_argument(model: Any) -> str:
    """The name a causal LM's forward takes its key-value cache by: transformers 5 calls it ``cache``, earlier
    versions ``past_key_values``."""
    return "cache" if "cache" in inspect.signature(model.forward).parameters else "past_key_values"


def _decoder(model: Any, input_ids: Any, decode_tokens: int) -> Callable[[], None]:
    cache_name = cache_argument(model)

    def decode() -> None:
        out = model(input_ids=input_ids, use_cache=True)
        cache, token = getattr(out, cache_name), out.logits[:, -1:].argmax(-1)
        for _ in range(decode_tokens):
            out = model(input_ids=token, use_cache=True, **{cache_name: cache})
            cache, token = getattr(out, cache_name), out.logits[:, -1:].argmax(-1)

    return decode
