"""Wrong: draws a convolution weight of its own, in a layout of its own (flattened), instead of building the
reference's convolution; no initialisation of its parameters can make its weights the reference's."""

import torch
import torch.nn as nn
import torch.nn.functional as F


class ModelNew(nn.Module):
    def __init__(self, in_channels, out_channels, kernel_size, stride, padding, scale, bias_shape, dtype, norm_eps):
        super().__init__()
        self.shape = (out_channels, in_channels, *kernel_size)
        self.flat_weight = nn.Parameter(0.1 * torch.randn(out_channels, in_channels * kernel_size[0] * kernel_size[1],
                                                          dtype=dtype))
        self.conv_bias = nn.Parameter(torch.zeros(out_channels, dtype=dtype))
        self.bn = nn.BatchNorm2d(out_channels, eps=1e-5 if norm_eps is None else norm_eps, dtype=dtype)
        self.bias = nn.Parameter(torch.randn(bias_shape, dtype=dtype))
        self.scale, self.stride, self.padding = scale, stride, padding
        with torch.no_grad():
            self.bn.weight.uniform_(0.5, 1.5)
            self.bn.bias.uniform_(-0.5, 0.5)
            self.bn.running_mean.uniform_(-0.5, 0.5)
            self.bn.running_var.uniform_(0.5, 1.5)
        self.eval()

    def forward(self, x):
        y = F.conv2d(x, self.flat_weight.view(self.shape), self.conv_bias, self.stride, self.padding)
        return self.bn(y * self.scale) + self.bias
