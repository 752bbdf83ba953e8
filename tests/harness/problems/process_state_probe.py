"""y = relu(x) * scale, whose forward writes down the state of its process at every call made while the collector
is paused (the timed blocks, warm-up included) to the file ``PROCESS_STATE_LOG`` names: what a timed call runs under
in the candidate's worker and in the baseline worker, compared by ``test_fair_timing.py``."""

import gc
import json
import os
import sys
import threading

import torch
import torch.nn as nn


def process_state() -> dict:
    from torch.overrides import _get_current_function_mode_stack
    from torch.utils._python_dispatch import _get_current_dispatch_mode_stack

    return {
        "pid": os.getpid(),
        "cpus": sorted(os.sched_getaffinity(0)),  # the calling thread's
        "threads": torch.get_num_threads(),
        "interop_threads": torch.get_num_interop_threads(),
        "python_threads": threading.active_count(),
        "trace": sys.gettrace() is not None,
        "profile": sys.getprofile() is not None,
        "function_modes": len(_get_current_function_mode_stack()),
        "dispatch_modes": len(_get_current_dispatch_mode_stack()),
        "profiler": torch.autograd._profiler_enabled(),
        "grad": torch.is_grad_enabled(),
        "inference_mode": torch.is_inference_mode_enabled(),
        "default_dtype": str(torch.get_default_dtype()),
        "deterministic": torch.are_deterministic_algorithms_enabled(),
        "matmul_precision": torch.get_float32_matmul_precision(),
        "environment": {k: v for k, v in os.environ.items() if k.startswith(("OMP_", "MKL_", "PYTORCH_"))},
    }


class Model(nn.Module):
    def __init__(self, scale: float):
        super().__init__()
        self.scale = scale

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        log = os.environ.get("PROCESS_STATE_LOG")
        if log and not gc.isenabled():
            with open(log, "a") as out:
                out.write(json.dumps(process_state()) + "\n")
        return torch.relu(x) * self.scale


def get_inputs():
    return [torch.randn(256, 256)]


def get_init_inputs():
    return [2.0]
