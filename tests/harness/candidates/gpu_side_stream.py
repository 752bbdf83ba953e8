"""Cheat 2 on the GPU: the kernel runs on a side stream, after a long spin, and forward returns without making
the caller's stream wait: a timer that synchronizes only the current stream would miss all of it."""

import torch

from harness.gpu_kernels import ext

SPIN_CYCLES = 50_000_000  # some 25-35 ms at H100 clocks


class ModelNew(torch.nn.Module):
    def __init__(self, scale):
        super().__init__()
        self.scale = scale
        self.side = torch.cuda.Stream()

    def forward(self, x):
        out = torch.empty_like(x)
        self.side.wait_stream(torch.cuda.current_stream())  # the input is ready; the caller never waits back
        with torch.cuda.stream(self.side):
            torch.cuda._sleep(SPIN_CYCLES)
            ext.relu_scale_into(x, out, self.scale)
        return out
