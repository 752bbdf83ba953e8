"""Correct, but starts processes on its first call until one is refused: 1000 at most, each waiting to be ended
(so that without a limit it stays a nuisance, not a danger). The refusal ends the call."""

import os
import signal
import time

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
            children = []
            try:
                for _ in range(1000):
                    pid = os.fork()
                    if pid == 0:
                        time.sleep(120)
                        os._exit(0)
                    children.append(pid)
            finally:
                for pid in children:
                    os.kill(pid, signal.SIGKILL)
                    os.waitpid(pid, 0)
        return torch.from_numpy(np.maximum(x.numpy(), 0) * np.float32(self.scale))
