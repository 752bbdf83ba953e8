"""GEMM with its epilogue fused, written for Intel Xe GPUs: one program per output tile, its x and W tiles read
through tensor descriptors (2D block loads on Xe), tl.dot into an fp32 accumulator (XMX for 16-bit inputs), then
bias, sigmoid, scale and the residual applied in registers before the tile's single store."""

import torch
import torch.nn as nn
import triton
import triton.language as tl


@triton.jit
def linear_sigmoid_residual_kernel(
    x_ptr, w_ptr, b_ptr, y_ptr, scale,
    M: tl.constexpr, N: tl.constexpr, K: tl.constexpr,  # fixed by the problem: constexpr lets the compiler
    BLOCK_M: tl.constexpr, BLOCK_N: tl.constexpr, BLOCK_K: tl.constexpr,  # prove alignment and drop checks
    GROUP_M: tl.constexpr,
):
    # Programs walk the tiles in groups of GROUP_M tile rows, so that neighbouring work-groups read the same
    # W tiles (and x tiles) from the last-level cache instead of memory.
    pid = tl.program_id(0)
    tiles_m = tl.cdiv(M, BLOCK_M)
    tiles_n = tl.cdiv(N, BLOCK_N)
    in_group = GROUP_M * tiles_n
    first_m = (pid // in_group) * GROUP_M
    group_m = min(tiles_m - first_m, GROUP_M)
    pid_m = first_m + (pid % in_group) % group_m
    pid_n = (pid % in_group) // group_m

    # Tensor descriptors: the compiler loads whole tiles with 2D block reads and checks the bounds in hardware.
    # W is nn.Linear's (N, K) row-major weight; its (BLOCK_N, BLOCK_K) tiles are transposed in registers.
    x_desc = tl.make_tensor_descriptor(x_ptr, shape=(M, K), strides=(K, 1), block_shape=(BLOCK_M, BLOCK_K))
    w_desc = tl.make_tensor_descriptor(w_ptr, shape=(N, K), strides=(K, 1), block_shape=(BLOCK_N, BLOCK_K))
    acc = tl.zeros((BLOCK_M, BLOCK_N), dtype=tl.float32)
    for k in range(0, K, BLOCK_K):
        a = x_desc.load([pid_m * BLOCK_M, k])
        b = w_desc.load([pid_n * BLOCK_N, k])
        # ieee: fp32 inputs are multiplied in fp32 (tf32 would miss a 1e-4 tolerance); 16-bit inputs use XMX.
        acc = tl.dot(a, b.T, acc, input_precision="ieee")

    # The epilogue, on the accumulator while it is still in registers.
    cols = pid_n * BLOCK_N + tl.arange(0, BLOCK_N)
    z = acc + tl.load(b_ptr + cols, mask=cols < N, other=0.0).to(tl.float32)[None, :]
    y = tl.sigmoid(z) * scale + z
    y_desc = tl.make_tensor_descriptor(y_ptr, shape=(M, N), strides=(N, 1), block_shape=(BLOCK_M, BLOCK_N))
    y_desc.store([pid_m * BLOCK_M, pid_n * BLOCK_N], y.to(y_desc.dtype))


def launch_options(device: torch.device, dtype: torch.dtype) -> dict:
    """Tiles and launch options for the device the tensors are on. Xe: 16-bit GEMMs take Intel's own large
    configuration (256x256x32, 32 sub-groups, 256 registers per thread); fp32 runs on the vector engines, with
    smaller tiles. grf_mode exists only in Intel's Triton, so it is passed only on xpu."""
    sixteen_bit = dtype in (torch.float16, torch.bfloat16)
    if device.type == "xpu":
        tiles = (256, 256, 32, 32) if sixteen_bit else (128, 128, 32, 16)
        extra = {"grf_mode": "256", "num_stages": 2}
    elif device.type == "cuda":
        # NVIDIA's Triton builds descriptors in a scratch buffer it asks the host for.
        triton.set_allocator(lambda size, alignment, stream: torch.empty(size, dtype=torch.int8, device=device))
        tiles = (128, 128, 64, 8) if sixteen_bit else (128, 128, 32, 8)
        extra = {"num_stages": 3}
    else:  # Triton's interpreter on the CPU (TRITON_INTERPRET=1): small tiles keep it quick
        tiles, extra = (32, 32, 32, 4), {}
    block_m, block_n, block_k, warps = tiles
    return {"BLOCK_M": block_m, "BLOCK_N": block_n, "BLOCK_K": block_k, "GROUP_M": 4, "num_warps": warps, **extra}


class ModelNew(nn.Module):
    def __init__(self, in_features: int, out_features: int, scale: float):
        super().__init__()
        self.linear = nn.Linear(in_features, out_features)  # the same parameter names as Model's
        self.scale = scale

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        x = x.contiguous()
        weight, bias = self.linear.weight.contiguous(), self.linear.bias.contiguous()
        (m, k), n = x.shape, weight.shape[0]
        y = torch.empty((m, n), device=x.device, dtype=x.dtype)
        config = launch_options(x.device, x.dtype)
        grid = (triton.cdiv(m, config["BLOCK_M"]) * triton.cdiv(n, config["BLOCK_N"]),)
        linear_sigmoid_residual_kernel[grid](x, weight, bias, y, self.scale, m, n, k, **config)
        return y
