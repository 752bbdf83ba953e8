"""Starts a long-lived child process, writes its pid down, then hangs: the timeout must end both."""

import subprocess
import sys

import torch


class ModelNew(torch.nn.Module):
    def __init__(self, scale):
        super().__init__()

    def forward(self, x):
        child = subprocess.Popen([sys.executable, "-c", "import time; time.sleep(600)"])
        with open("child.pid", "w") as handle:
            handle.write(str(child.pid))
        while True:
            pass
