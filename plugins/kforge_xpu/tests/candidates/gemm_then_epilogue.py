"""A correct but unfused candidate for the example problem: a GEMM kernel on tensors of pointers (masked loads,
no descriptors) that writes z, then an elementwise kernel that reads z back for the epilogue."""

import torch
import torch.nn as nn
import triton
import triton.language as tl


@triton.jit
def linear_kernel(x_ptr, w_ptr, b_ptr, z_ptr, M, N, K,
                  BLOCK_M: tl.constexpr, BLOCK_N: tl.constexpr, BLOCK_K: tl.constexpr):
    rows = tl.program_id(0) * BLOCK_M + tl.arange(0, BLOCK_M)
    cols = tl.program_id(1) * BLOCK_N + tl.arange(0, BLOCK_N)
    acc = tl.zeros((BLOCK_M, BLOCK_N), dtype=tl.float32)
    for k0 in range(0, K, BLOCK_K):
        ks = k0 + tl.arange(0, BLOCK_K)
        a = tl.load(x_ptr + rows[:, None] * K + ks[None, :], mask=(rows[:, None] < M) & (ks[None, :] < K), other=0.0)
        b = tl.load(w_ptr + cols[None, :] * K + ks[:, None], mask=(cols[None, :] < N) & (ks[:, None] < K), other=0.0)
        acc = tl.dot(a, b, acc, input_precision="ieee")
    acc += tl.load(b_ptr + cols, mask=cols < N, other=0.0)[None, :]
    tl.store(z_ptr + rows[:, None] * N + cols[None, :], acc, mask=(rows[:, None] < M) & (cols[None, :] < N))


@triton.jit
def sigmoid_scale_add_kernel(z_ptr, y_ptr, scale, n, BLOCK: tl.constexpr):
    offsets = tl.program_id(0) * BLOCK + tl.arange(0, BLOCK)
    z = tl.load(z_ptr + offsets, mask=offsets < n)
    tl.store(y_ptr + offsets, tl.sigmoid(z) * scale + z, mask=offsets < n)


class ModelNew(nn.Module):
    def __init__(self, in_features: int, out_features: int, scale: float):
        super().__init__()
        self.linear = nn.Linear(in_features, out_features)
        self.scale = scale

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        x, w = x.contiguous(), self.linear.weight.contiguous()
        (m, k), n = x.shape, w.shape[0]
        z = torch.empty((m, n), device=x.device, dtype=torch.float32)
        linear_kernel[(triton.cdiv(m, 32), triton.cdiv(n, 32))](x, w, self.linear.bias, z, m, n, k,
                                                                BLOCK_M=32, BLOCK_N=32, BLOCK_K=32)
        y = torch.empty((m, n), device=x.device, dtype=x.dtype)
        sigmoid_scale_add_kernel[(triton.cdiv(z.numel(), 1024),)](z, y, self.scale, z.numel(), BLOCK=1024)
        return y
