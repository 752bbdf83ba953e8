"""Cheat 2 (on the CPU): returns at once and lets a thread fill the output later, so a timer stopped at return
sees almost no time."""

import threading
import time

import numpy as np
import torch


class ModelNew(torch.nn.Module):
    def __init__(self, scale):
        super().__init__()
        self.scale = scale

    def forward(self, x):
        out = torch.empty_like(x)

        def work():
            time.sleep(0.3)
            out.numpy()[...] = np.maximum(x.numpy(), 0) * np.float32(self.scale)

        threading.Thread(target=work, daemon=True).start()
        return out
