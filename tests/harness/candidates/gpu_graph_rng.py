"""Correct on the GPU, the way graph code is written: one CUDA graph captured per input shape, replayed on every
call from static input and output buffers (the same output tensor is returned each time), with a random draw inside
the graph (dropout-like noise, new values at each replay) that the output keeps at zero weight."""

import torch


class ModelNew(torch.nn.Module):
    def __init__(self, scale):
        super().__init__()
        self.scale = scale
        self.graphs = {}

    def forward(self, x):
        key = tuple(x.shape)
        if key not in self.graphs:
            static_in, static_out, noise = torch.empty_like(x), torch.empty_like(x), torch.empty_like(x)
            static_in.copy_(x)
            graph = torch.cuda.CUDAGraph()
            with torch.cuda.graph(graph):
                noise.uniform_()
                torch.mul(torch.relu(static_in), self.scale, out=static_out)
                static_out.add_(noise, alpha=0.0)
            # every tensor the graph reads or writes is kept with it: a buffer let go (the noise) is handed to other
            # tensors, and each replay would write into them
            self.graphs[key] = (graph, static_in, static_out, noise)
        graph, static_in, static_out, _ = self.graphs[key]
        static_in.copy_(x)
        graph.replay()
        return static_out
