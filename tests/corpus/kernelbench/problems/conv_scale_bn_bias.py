"""A level-2 style problem: convolution, scale, batch norm (inference), bias.

Its constructor takes what KernelBench's level-2 problems pass: tuples (kernel size, stride, bias shape), a list
(padding), a float, a torch.dtype and None.
"""

import torch
import torch.nn as nn


class Model(nn.Module):
    def __init__(self, in_channels, out_channels, kernel_size, stride, padding, scale, bias_shape, dtype, norm_eps):
        super().__init__()
        self.conv = nn.Conv2d(in_channels, out_channels, kernel_size, stride=stride, padding=padding, dtype=dtype)
        self.scale = scale
        self.bn = nn.BatchNorm2d(out_channels, eps=1e-5 if norm_eps is None else norm_eps, dtype=dtype)
        self.bias = nn.Parameter(torch.randn(bias_shape, dtype=dtype))
        with torch.no_grad():  # statistics and affine parameters of its own, so the norm is not the identity
            self.bn.weight.uniform_(0.5, 1.5)
            self.bn.bias.uniform_(-0.5, 0.5)
            self.bn.running_mean.uniform_(-0.5, 0.5)
            self.bn.running_var.uniform_(0.5, 1.5)
        self.eval()  # inference: the running statistics normalise

    def forward(self, x):
        return self.bn(self.conv(x) * self.scale) + self.bias


batch_size = 4
in_channels = 3
out_channels = 8
height = width = 16
kernel_size = (3, 3)
stride = (2, 2)
padding = [1, 1]
scale = 0.5
bias_shape = (out_channels, 1, 1)


def get_inputs():
    return [torch.randn(batch_size, in_channels, height, width)]


def get_init_inputs():
    return [in_channels, out_channels, kernel_size, stride, padding, scale, bias_shape, torch.float32, None]
