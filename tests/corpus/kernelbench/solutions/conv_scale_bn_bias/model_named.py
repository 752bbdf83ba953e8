"""Correct, but named like the reference (some published solution sets keep the name Model): the same layers,
its forward written with the functional operators."""

import torch
import torch.nn as nn
import torch.nn.functional as F


class Model(nn.Module):
    def __init__(self, in_channels, out_channels, kernel_size, stride, padding, scale, bias_shape, dtype, norm_eps):
        super().__init__()
        self.conv = nn.Conv2d(in_channels, out_channels, kernel_size, stride=stride, padding=padding, dtype=dtype)
        self.scale = scale
        self.bn = nn.BatchNorm2d(out_channels, eps=1e-5 if norm_eps is None else norm_eps, dtype=dtype)
        self.bias = nn.Parameter(torch.randn(bias_shape, dtype=dtype))
        with torch.no_grad():
            self.bn.weight.uniform_(0.5, 1.5)
            self.bn.bias.uniform_(-0.5, 0.5)
            self.bn.running_mean.uniform_(-0.5, 0.5)
            self.bn.running_var.uniform_(0.5, 1.5)

    def forward(self, x):
        y = F.conv2d(x, self.conv.weight * self.scale, self.conv.bias * self.scale, self.conv.stride,
                     self.conv.padding)
        y = F.batch_norm(y, self.bn.running_mean, self.bn.running_var, self.bn.weight, self.bn.bias,
                         training=False, eps=self.bn.eps)
        return y + self.bias
