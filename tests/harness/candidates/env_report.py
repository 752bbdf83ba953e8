"""Correct, and reports what it sees of its process: environment names, working directory, pid, limits, and the
unit of the device its process was bound to (torch-cpu-units' variable)."""

import os
import resource

import numpy as np
import torch

print("ENV=" + ",".join(sorted(os.environ)))
print("CWD=" + os.getcwd())
print("PID=%d" % os.getpid())
print("RLIMIT_CORE=%d,%d" % resource.getrlimit(resource.RLIMIT_CORE))
print("RLIMIT_FSIZE=%d,%d" % resource.getrlimit(resource.RLIMIT_FSIZE))
print("RLIMIT_AS=%d,%d" % resource.getrlimit(resource.RLIMIT_AS))
print("SESSION_LEADER=%s" % (os.getsid(0) == os.getpid()))
print("UNIT=" + os.environ.get("TORCH_TEST_UNITS", "none"))  # the device unit a harness bound it to
print("RUNTIME=" + os.environ.get("TORCH_TEST_RUNTIME", "none"))  # torch-cpu-units' runtime_environment
print("COMPILE_THREADS=" + os.environ.get("TORCHINDUCTOR_COMPILE_THREADS", "none"))
with open("written-by-candidate.txt", "w") as handle:
    handle.write("hello")


class ModelNew(torch.nn.Module):
    def __init__(self, scale):
        super().__init__()
        self.scale = scale

    def forward(self, x):
        return torch.from_numpy(np.maximum(x.numpy(), 0) * np.float32(self.scale))
