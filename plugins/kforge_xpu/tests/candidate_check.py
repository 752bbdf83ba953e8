"""Runs a candidate for the example problem against the problem's Model on one device and reports how far apart
they are. The interpreter test runs it in a child process with TRITON_INTERPRET=1 (``python candidate_check.py
cpu FILE...``); the GPU test calls :func:`max_relative_errors` on ``cuda``."""

from __future__ import annotations

import importlib.util
import json
import sys
from pathlib import Path

import torch

HERE = Path(__file__).resolve().parent
sys.path.insert(0, str(HERE.parent / "kforge_xpu" / "example"))
import gemm_epilogue as problem  # noqa: E402

# (batch, in_features, out_features), dtype: small shapes, some that tiles do not divide (37 rows).
SMALL_CASES = [((64, 64, 80), torch.float32), ((37, 64, 72), torch.float32), ((40, 64, 48), torch.float16)]


def load(path: Path):
    spec = importlib.util.spec_from_file_location(f"candidate_{path.stem}", path)
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


def max_relative_errors(path: Path, device: str, cases=SMALL_CASES) -> list[float]:
    """Per case: max |candidate - reference| / max(|reference|, 1), the reference computed in float32 on the CPU."""
    candidate = load(path)
    errors = []
    for (batch, k, n), dtype in cases:
        torch.manual_seed(0)
        reference = problem.Model(k, n, 2.0)
        model = candidate.ModelNew(k, n, 2.0)
        model.load_state_dict(reference.state_dict())
        x = torch.randn(batch, k)
        expected = reference.to(dtype).float()(x.to(dtype).float())
        with torch.no_grad():
            out = model.to(device=device, dtype=dtype)(x.to(device=device, dtype=dtype))
        assert out.shape == expected.shape and out.dtype == dtype, (out.shape, out.dtype)
        errors.append(float((out.float().cpu() - expected).abs().max() / max(expected.abs().max().item(), 1.0)))
    return errors


if __name__ == "__main__":
    device, *files = sys.argv[1:]
    print(json.dumps({Path(f).name: max_relative_errors(Path(f), device) for f in files}))
