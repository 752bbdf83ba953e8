"""What each of PyTorch's precision switches lets float32 work compute in, so that a switch a candidate turned on
is judged against the precision contract: TF32 under ``tf32`` is within it, under ``fp32`` it is a downgrade.

The worker reads the switches (:mod:`kforge_core.harness.integrity` names them); the static check reads the
candidate's source for the same switches. Nothing here imports torch.
"""

from __future__ import annotations

from typing import Any

# a boolean switch, by attribute name -> the compute type it enables when true (false enables nothing narrower)
BOOLEAN_SWITCHES = {
    "allow_tf32": "tf32",
    "allow_fp16_reduced_precision_reduction": "float16",
    "allow_bf16_reduced_precision_reduction": "bfloat16",
}
# a value of set_float32_matmul_precision() or of an fp32_precision switch -> the compute type it enables
# ("none": the parent switch's value, which is watched itself)
PRECISION_VALUES = {"highest": "float32", "ieee": "float32", "none": "float32", "high": "tf32", "tf32": "tf32",
                    "medium": "bfloat16", "bf16": "bfloat16"}
_DEFAULT_DTYPES = {"torch.float64": "float32", "torch.float32": "float32", "torch.float16": "float16",
                   "torch.bfloat16": "bfloat16"}


def switch_computes_in(name: str, value: Any) -> str | None:
    """The compute type switch ``name`` (as the worker names it) set to ``value`` enables, or None when that is
    not known (no contract permits an unknown setting)."""
    attribute = name.rsplit(".", 1)[-1]
    if attribute in BOOLEAN_SWITCHES:
        return BOOLEAN_SWITCHES[attribute] if value else "float32"
    if name == "torch.get_float32_matmul_precision()" or attribute == "fp32_precision":
        return PRECISION_VALUES.get(value)
    if name == "torch.get_default_dtype()":
        return _DEFAULT_DTYPES.get(str(value))
    return None
