"""The phases of a model, driven step by step: a causal LM's prefill (one forward over the prompt, building the
key-value cache) and decode (one token per sequence a step, with the cache); any other model's forward.

Each step runs inside ``around(phase, index)``, which the profiler and the capture use to know where they are."""

from __future__ import annotations

import statistics
from contextlib import AbstractContextManager, contextmanager, nullcontext
from dataclasses import dataclass
from typing import Any, Callable, Iterator

from ...model_worker.end_to_end_timing import cache_argument

Around = Callable[[str, int], AbstractContextManager[Any]]


def _nothing(phase: str, index: int) -> AbstractContextManager[Any]:
    return nullcontext()


@dataclass
class Driver:
    """Runs ``model`` phase by phase. For a causal LM, ``inputs`` is ``(input_ids,)`` (``[batch, prompt]``)."""

    model: Any
    inputs: tuple[Any, ...]
    causal_lm: bool

    @property
    def phases(self) -> tuple[str, ...]:
        return ("prefill", "decode") if self.causal_lm else ("forward",)

    def run(self, phase: str, steps: int, around: Around = _nothing, device: Any = None) -> None:
        """``steps`` steps of ``phase``; with ``device``, the decode steps start after the device has finished
        the prefill that built their cache (so that a profile of the steps holds none of its work)."""
        import torch

        with torch.no_grad():
            if phase == "decode":
                self._decode(steps, around, device.synchronize if device is not None else lambda: None)
                return
            for index in range(steps):
                with around(phase, index):
                    self._prefill() if phase == "prefill" else self.model(*self.inputs)

    def _prefill(self) -> Any:
        return self.model(input_ids=self.inputs[0], use_cache=True)

    def _decode(self, steps: int, around: Around, before_steps: Callable[[], None] = lambda: None) -> None:
        name = cache_argument(self.model)
        out = self._prefill()
        cache, token = getattr(out, name), out.logits[:, -1:].argmax(-1)
        before_steps()
        for index in range(steps):
            with around("decode", index):
                out = self.model(input_ids=token, use_cache=True, **{name: cache})
            cache, token = getattr(out, name), out.logits[:, -1:].argmax(-1)

    def after_one_step(self, phase: str, steps: int, device: Any, begin: Callable[[], None]) -> None:
        """One untimed step of ``phase`` (for decode, after the prefill that builds its cache), the device
        synchronised so that its work is done, ``begin()``, then ``steps`` steps: what a measured sample times with
        a clock and a profiled session (:mod:`.profile`) with the profiler."""

        @contextmanager
        def around(name: str, index: int) -> Iterator[None]:
            if index == 1:
                device.synchronize()
                begin()
            yield

        self.run(phase, steps + 1, around, device)

    def step_ms(self, phase: str, device: Any, steps: int, repetitions: int) -> list[float]:
        """Milliseconds of one step of ``phase``, each repetition's figure: after the device's cache flush,
        ``steps`` steps after one untimed step (:meth:`after_one_step`) timed together, divided by ``steps``."""
        samples = []
        for _ in range(repetitions):
            clock: list[Callable[[], float]] = []
            device.flush_caches()
            device.synchronize()
            self.after_one_step(phase, steps, device, lambda: clock.append(device.start_timer()))
            device.synchronize()
            samples.append(clock[0]() / steps)
        return samples


def median(samples: list[float]) -> float:
    return statistics.median(samples)
