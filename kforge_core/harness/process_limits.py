"""The resource limits a worker starts under, as a record both sides use: the KForge process decides them
(``host/sandbox.py``), and they are applied in the new process before anything of the worker runs, by a
``preexec_fn`` before exec or by a worker forked from a template (``worker/template.py``)."""

from __future__ import annotations

import resource
from dataclasses import dataclass


@dataclass(frozen=True)
class WorkerLimits:
    """The resource limits a worker starts under, in bytes and counts (0: not set), applied in the new process
    before anything of the worker runs (:meth:`apply`): as a ``preexec_fn`` before exec, or in a worker forked from
    a template (``worker_start.py``)."""

    file_size_bytes: int
    address_space_bytes: int = 0
    processes: int = 0

    def apply(self) -> None:
        _lower(resource.RLIMIT_CORE, 0)
        _lower(resource.RLIMIT_FSIZE, self.file_size_bytes)
        if self.address_space_bytes:
            _lower(resource.RLIMIT_AS, self.address_space_bytes)
        if self.processes:
            _lower(resource.RLIMIT_NPROC, self.processes)


def _lower(which: int, value: int) -> None:
    """Set both limits to ``value``, or to the hard limit where that is already lower."""
    _, hard = resource.getrlimit(which)
    if hard != resource.RLIM_INFINITY:
        value = min(value, hard)
    resource.setrlimit(which, (value, value))
