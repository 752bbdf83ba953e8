"""What each of PyTorch's precision switches lets float32 work compute in, so that a switch a candidate turned on
is judged against the precision contract: TF32 under ``tf32`` is within it, under ``fp32`` it is a downgrade.

The switches are the ones :mod:`kforge_core.harness.integrity` snapshots, named as it names them.
"""

from __future__ import annotations

from typing import Any

import torch

# switch -> its value -> the compute type it enables ("float32" where it enables nothing narrower)
_BOOLEAN = {
    "torch.backends.cuda.matmul.allow_tf32": "tf32",
    "torch.backends.cudnn.allow_tf32": "tf32",
    "torch.backends.cuda.matmul.allow_fp16_reduced_precision_reduction": "float16",
    "torch.backends.cuda.matmul.allow_bf16_reduced_precision_reduction": "bfloat16",
}
_MATMUL_PRECISION = {"highest": "float32", "high": "tf32", "medium": "bfloat16"}
_FP32_PRECISION = {"ieee": "float32", "none": "float32", "tf32": "tf32", "bf16": "bfloat16"}  # none: the parent's
_DEFAULT_DTYPE = {torch.float64: "float32", torch.float32: "float32", torch.float16: "float16",
                  torch.bfloat16: "bfloat16"}


def switch_computes_in(name: str, value: Any) -> str | None:
    """The compute type switch ``name`` set to ``value`` enables, or None when it is not known (no contract
    permits an unknown setting)."""
    if name in _BOOLEAN:
        return _BOOLEAN[name] if value else "float32"
    if name == "torch.get_float32_matmul_precision()":
        return _MATMUL_PRECISION.get(value)
    if name == "torch.get_default_dtype()":
        return _DEFAULT_DTYPE.get(value)
    if name.endswith("fp32_precision"):
        return _FP32_PRECISION.get(value)
    return None
