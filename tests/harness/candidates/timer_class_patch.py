"""Timing fraud without a module name changed: at import, the timer method is replaced on the device's classes
(found through their modules, the names built from strings), so every timed call reports 1 microsecond; the
forward itself is correct and sleeps 100 ms, far slower than eager (and far beyond what a busy host's scheduling
adds to the outside clock: tens of milliseconds on a loaded 2-core machine)."""

import sys
import time

import numpy as np
import torch


def _instant(self):
    return lambda: 0.001


for _module in ("kforge_core." + "device", "kforge_core.devices." + "cpu", "kforge_core.devices." + "harness_device"):
    for _value in list(vars(sys.modules[_module]).values()):
        if isinstance(_value, type) and "start_" + "timer" in vars(_value):
            setattr(_value, "start_" + "timer", _instant)


class ModelNew(torch.nn.Module):
    def __init__(self, scale):
        super().__init__()
        self.scale = scale

    def forward(self, x):
        time.sleep(0.1)
        return torch.from_numpy(np.maximum(x.numpy(), 0) * np.float32(self.scale))
