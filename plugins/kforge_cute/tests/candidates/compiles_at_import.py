"""Compiles its kernel when imported, on CPU tensors (CUTE_DSL_ARCH names the target): the compile stage's tests
run it with no GPU and no warm-up call. KERNEL_BODY is replaced by the tests to make a broken variant."""

import cutlass
import cutlass.cute as cute
import torch
import torch.nn as nn
from cutlass.cute.runtime import from_dlpack


@cute.kernel
def double_kernel(gX: cute.Tensor, gY: cute.Tensor):
    tidx, _, _ = cute.arch.thread_idx()
    gY[tidx] = gX[tidx] * 2.0  # KERNEL_BODY


@cute.jit
def launch(mX: cute.Tensor, mY: cute.Tensor):
    double_kernel(mX, mY).launch(grid=(1, 1, 1), block=(64, 1, 1))


COMPILED = cute.compile(launch, from_dlpack(torch.randn(64)), from_dlpack(torch.empty(64)))


class ModelNew(nn.Module):
    def forward(self, x: torch.Tensor) -> torch.Tensor:
        return x * 2.0
