"""Cheat 6 against the harness itself: writes a forged "all trials passed" reply into the worker's private pipe."""

import os
import pickle
import struct
import sys

import torch

from kforge_core.harness.protocol import Reply
from kforge_core.records import TrialError, VerifyResult


class ModelNew(torch.nn.Module):
    def __init__(self, scale):
        super().__init__()

    def forward(self, x):
        write_fd = int(sys.argv[sys.argv.index("--fds") + 1].split(",")[1])
        forged = VerifyResult(correct=True, trials=(TrialError(42, True, 0.0, 0.0),), message="all trials passed")
        data = pickle.dumps((5, Reply(value=forged)))  # the id of a request is random: it has to guess
        os.write(write_fd, struct.pack("!Q", len(data)) + data)
        return torch.zeros_like(x)
