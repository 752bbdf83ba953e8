"""A small transformer block built from the operators the shipped examples optimise, for ``kforge integrate``:
LayerNorm, attention with a row softmax, RMSNorm, a linear layer with GELU and a scale, GELU with a scale and a
shift, and the exact GELU. Tokens are rows: the block takes (tokens, width).

    kforge integrate examples.models.tiny_block:build_model --kernels DIR --backend cpu
"""

import torch
import torch.nn as nn
import torch.nn.functional as F


class RMSNorm(nn.Module):
    def __init__(self, width: int, eps: float = 1e-6):
        super().__init__()
        self.eps = eps
        self.weight = nn.Parameter(torch.ones(width))

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        return x * torch.rsqrt(x.pow(2).mean(dim=-1, keepdim=True) + self.eps) * self.weight


class RowSoftmax(nn.Module):
    def forward(self, x: torch.Tensor) -> torch.Tensor:
        return torch.softmax(x, dim=1)


class GELU(nn.Module):
    def forward(self, x: torch.Tensor) -> torch.Tensor:
        return F.gelu(x)


class GeluScaleShift(nn.Module):
    def __init__(self, scale: float, shift: float):
        super().__init__()
        self.scale = scale
        self.shift = shift

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        return F.gelu(x) * self.scale + self.shift


class LinearGeluScale(nn.Module):
    def __init__(self, in_features: int, out_features: int, scale: float):
        super().__init__()
        self.linear = nn.Linear(in_features, out_features)
        self.scale = scale

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        return F.gelu(self.linear(x)) * self.scale


class Attention(nn.Module):
    def __init__(self, width: int, heads: int):
        super().__init__()
        self.heads = heads
        self.qkv = nn.Linear(width, 3 * width)
        self.out = nn.Linear(width, width)
        self.softmax = RowSoftmax()

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        tokens, width = x.shape
        q, k, v = self.qkv(x).view(tokens, 3, self.heads, width // self.heads).permute(1, 2, 0, 3)
        scores = q @ k.transpose(-1, -2) / (width // self.heads) ** 0.5  # (heads, tokens, tokens)
        weights = self.softmax(scores.reshape(-1, tokens)).view(self.heads, tokens, tokens)
        return self.out((weights @ v).transpose(0, 1).reshape(tokens, width))


class TinyBlock(nn.Module):
    def __init__(self, width: int = 256, heads: int = 4):
        super().__init__()
        self.norm1 = nn.LayerNorm(width)
        self.attention = Attention(width, heads)
        self.norm2 = RMSNorm(width)
        self.up = LinearGeluScale(width, 4 * width, 0.5)
        self.activation = GeluScaleShift(1.7, -0.25)
        self.down = nn.Linear(4 * width, width)
        self.out = GELU()

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        h = x + self.attention(self.norm1(x))
        return self.out(h + self.down(self.activation(self.up(self.norm2(h)))))


def build_model(tokens: int = 512, width: int = 256):
    """The block with seeded random weights, and one (tokens, width) input."""
    torch.manual_seed(0)
    return TinyBlock(width), [torch.randn(tokens, width)]
