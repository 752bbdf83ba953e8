"""Correct, but starts threads on its first call until one is refused: 1000 at most, each waiting to be ended.
The refusal ends the call."""

import threading

import numpy as np
import torch

started = []


class ModelNew(torch.nn.Module):
    def __init__(self, scale):
        super().__init__()
        self.scale = scale

    def forward(self, x):
        if not started:
            started.append(True)
            done, threads = threading.Event(), []
            try:
                for _ in range(1000):
                    thread = threading.Thread(target=done.wait, daemon=True)
                    thread.start()
                    threads.append(thread)
            finally:
                done.set()
                for thread in threads:
                    thread.join()
        return torch.from_numpy(np.maximum(x.numpy(), 0) * np.float32(self.scale))
