"""The problem's module, inputs and models as the worker-side hooks need them, without disturbing the harness.

The harness keeps the problem's usual module (``kforge_problem_<name>``) for its reference and checks that nothing
replaced it, and it seeds PyTorch's generator for its own trials. So this plugin imports the problem under a
module name of its own, and draws inputs and builds models under a forked generator that is restored afterwards.
"""

from __future__ import annotations

from contextlib import contextmanager
from types import ModuleType
from typing import Iterator

from kforge_core.plugin_api import import_problem_module
from kforge_core.records import Problem


def problem_module(problem: Problem) -> ModuleType:
    return import_problem_module(problem.path, module_name=f"kforge_cpu_problem_{problem.digest}")


@contextmanager
def private_rng(seed: int = 0) -> Iterator[None]:
    """PyTorch's CPU generator seeded with ``seed`` inside the block, and as it was before after it."""
    import torch

    with torch.random.fork_rng(devices=[]):
        torch.manual_seed(seed)
        yield
