"""Correct: relu(x) * scale, computed on a thread pool made by the first forward and kept, as a compiler's is, with
a monitor thread asleep between checks (tqdm's, which autotuning starts): both outlive every call, waiting."""

import threading
from concurrent.futures import ThreadPoolExecutor

import numpy as np
import torch
import torch.nn as nn


class ModelNew(nn.Module):
    def __init__(self, scale: float):
        super().__init__()
        self.scale = scale
        self.pool = None

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        if self.pool is None:
            self.pool = ThreadPoolExecutor(2)
            self.stop = threading.Event()
            threading.Thread(target=self._monitor, daemon=True).start()
        work = self.pool.submit(lambda: np.maximum(x.numpy(), 0) * np.float32(self.scale))
        return torch.from_numpy(work.result())

    def _monitor(self) -> None:
        while not self.stop.wait(10.0):
            pass
