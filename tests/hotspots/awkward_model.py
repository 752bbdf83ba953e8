"""A model of the user's own classes for ``kforge hotspots --extract``: some modules a problem can be written from
(a torch LayerNorm, an MLP whose source and helper are carried), and some it cannot: one called with an object a
problem's inputs cannot hold, one that keeps state between calls, one built from a function."""

import torch
import torch.nn as nn

WIDTH = 16


def _squash(x):
    return torch.tanh(x) * 0.5


class Tagged:
    def __init__(self, scale):
        self.scale = scale


class MLP(nn.Module):
    def __init__(self, width, hidden):
        super().__init__()
        self.up = nn.Linear(width, hidden)
        self.down = nn.Linear(hidden, width)

    def forward(self, x):
        return self.down(_squash(self.up(x)))


class Scaler(nn.Module):
    def forward(self, x, tag):
        return x * tag.scale


class Counter(nn.Module):
    def __init__(self):
        super().__init__()
        self.calls = 0

    def forward(self, x):
        self.calls += 1
        return x + self.calls


class Gate(nn.Module):
    def __init__(self, act):
        super().__init__()
        self.act = act

    def forward(self, x):
        return self.act(x)


class Block(nn.Module):
    def __init__(self, width):
        super().__init__()
        self.norm = nn.LayerNorm(width)
        self.mlp = MLP(width, 2 * width)
        self.scaler = Scaler()
        self.counter = Counter()
        self.gate = Gate(torch.sigmoid)

    def forward(self, x):
        x = self.mlp(self.norm(x))
        return self.gate(self.counter(self.scaler(x, Tagged(2.0))))


def build_model():
    torch.manual_seed(0)
    return Block(WIDTH), [torch.randn(4, WIDTH)]


def broken_model():
    raise RuntimeError("no weights here")
