"""Correct, and reports what it can reach outside its scratch directory: other processes, the network, the run
store, the home directory, the file system."""

import os
import socket
from pathlib import Path

import numpy as np
import torch


def attempt(action):
    try:
        action()
    except OSError as exc:
        return type(exc).__name__
    return "done"


def listing(path):
    try:
        return ",".join(sorted(os.listdir(path)))
    except OSError as exc:
        return type(exc).__name__


def connect():
    socket.create_connection(("127.0.0.1", int(os.environ["SANDBOX_TEST_PORT"])), timeout=2).close()


def write(path):
    return lambda: Path(path).write_text("written by a candidate")


pids = [p for p in os.listdir("/proc") if p.isdigit()]
print("PIDS=%d" % len(pids))
print("NETWORK=%s" % attempt(connect))
print("RUNS_DIR=%s" % listing(os.environ["SANDBOX_TEST_RUNS_DIR"]))
print("WRITE_RUNS_DIR=%s" % attempt(write(os.path.join(os.environ["SANDBOX_TEST_RUNS_DIR"], "x.txt"))))
print("WRITE_HOME=%s" % attempt(write(os.path.join(os.environ["HOME"], "x.txt"))))
print("WRITE_ELSEWHERE=%s" % attempt(write(os.environ["SANDBOX_TEST_ELSEWHERE"])))
print("WRITE_SCRATCH=%s" % attempt(write("scratch.txt")))
print("GPU_NODES=%s" % ",".join(sorted(n for n in os.listdir("/dev") if n.startswith("nvidia"))))


class ModelNew(torch.nn.Module):
    def __init__(self, scale):
        super().__init__()
        self.scale = scale

    def forward(self, x):
        return torch.from_numpy(np.maximum(x.numpy(), 0) * np.float32(self.scale))
