"""x @ weight, scaled, plus the residual: the product by BLAS, then scale and residual in one pass over the output,
in place (the weight is stored (in, out) already)."""

import numpy as np
import torch
import torch.nn as nn
from numba import njit

# The product is NumPy's own BLAS (the library NumPy ships with): Numba loops do not match a BLAS GEMM, and the
# work of a layer is in its product. The kernel fuses what PyTorch does in further passes over the output.


# one thread: the output is 1 MiB, and a parallel loop's threads would spin beside BLAS's for the cores
@njit(fastmath=True)
def scale_residual(y, scale, residual):
    for i in range(y.shape[0]):
        for j in range(y.shape[1]):
            y[i, j] = y[i, j] * scale + residual[i, j]


class ModelNew(nn.Module):
    def __init__(self, in_features: int, out_features: int, scale: float):
        super().__init__()
        self.weight = nn.Parameter(torch.randn(in_features, out_features) / in_features ** 0.5)
        self.scale = scale

    def forward(self, x: torch.Tensor, residual: torch.Tensor) -> torch.Tensor:
        weight = self.weight.detach().numpy()
        out = np.empty((x.shape[0], weight.shape[1]), dtype=np.float32)
        np.matmul(x.contiguous().numpy(), weight, out=out)
        scale_residual(out, np.float32(self.scale), residual.contiguous().numpy())
        return torch.from_numpy(out)
