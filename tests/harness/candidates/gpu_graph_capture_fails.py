"""Correct on the GPU: its first call tries to capture a CUDA graph, the capture fails (a synchronize inside it,
as cuDNN's workspace allocation makes a first capture fail in published solutions), and the candidate catches the
error and computes eagerly from then on. The failed capture leaves the device's random generator expecting the
capture's end, so the next random draw outside a capture raises."""

import torch


class ModelNew(torch.nn.Module):
    def __init__(self, scale):
        super().__init__()
        self.scale = scale
        self.tried = False

    def forward(self, x):
        if not self.tried:
            self.tried = True
            try:
                graph = torch.cuda.CUDAGraph()
                with torch.cuda.graph(graph):
                    torch.relu(x) * self.scale
                    torch.cuda.synchronize()  # not allowed while capturing: the capture is invalidated
            except Exception:
                pass
        return torch.relu(x) * self.scale
