"""Timing fraud on the GPU without a module name changed: at import, every timer of the NVIDIA device's classes is
replaced (the names built from strings), so each timed call reports 1 microsecond by the wall clock, the events and
the device's own records; the forward is correct (in PyTorch: evaluated under the report policy) and sleeps 300 ms:
longer than the delays a host busy with parallel tests adds to a baseline call now and then, which the outside clock
allows every call (at 20 ms a call, and at 100 ms, it went unflagged now and then beside seven other test
processes on the GPU)."""

import sys
import time

import torch



class _Instant:
    def stop(self):
        pass

    def elapsed_ms(self):
        return 0.001


for _module in ("kforge_core." + "device", "kforge_core.devices." + "harness_device", "kforge_nvidia." + "device"):
    for _value in list(vars(sys.modules[_module]).values()):
        if isinstance(_value, type):
            if "start_" + "timer" in vars(_value):
                setattr(_value, "start_" + "timer", lambda self: (lambda: 0.001))
            if "start_" + "events" in vars(_value):
                setattr(_value, "start_" + "events", lambda self: _Instant())


class ModelNew(torch.nn.Module):
    def __init__(self, scale):
        super().__init__()
        self.scale = scale

    def forward(self, x):
        time.sleep(0.3)
        return torch.relu(x) * self.scale
