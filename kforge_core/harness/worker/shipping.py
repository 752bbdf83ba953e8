"""Every call of a candidate goes through :func:`call_candidate`; the outputs of the calls that are checked leave
the process the moment the call returned (:func:`ship`), to be judged where the candidate cannot reach.

A correctness trial and a timed run are the same call: the same function, the same frames under the candidate's
forward. Which timed runs are checked is drawn after each run returned (:class:`TimedChecks`), from the operating
system's randomness, so no call can know whether its output will be looked at.

Shipping writes the output leaves (copies, in host memory) and the inputs the call changed to files in the
candidate's scratch directory (``output_files``: as many as the worker's file-size limit needs), each with its
SHA-256 taken as it was written, and sends a :class:`Shipped` message to the
KForge process at once; the referee's :class:`Judged` answer comes back. Nothing here holds an expected output. Stage
hooks run outside a harness worker (a plugin's own tools) have no KForge process to send to: their calls are judged
in their own process (:class:`LocalReferee`).
"""

from __future__ import annotations

import itertools
import os
from pathlib import Path
from typing import TYPE_CHECKING, Any, Callable, Protocol

import torch

from ..protocol import Conclude, Conclusion, Judged, Shipped
from .call_kinds import TIMED, TRACED, TRIAL  # noqa: F401 - what a shipped call was, named here for its callers
from .host_copies import host_copy
from .output_files import write_outputs

if TYPE_CHECKING:
    from ...device import Device
    from ...records import Backend, Problem
    from ...settings import HarnessSettings

OUTPUTS_DIR = "outputs"

_urandom = os.urandom  # bound before any candidate is imported


class Referee(Protocol):
    """Where shipped outputs are judged."""

    def judge(self, shipped: Shipped) -> Judged: ...

    def conclude(self, kind: str) -> Conclusion: ...


_referee: Referee | None = None
_numbers = itertools.count(1)


def use_referee(referee: Referee | None) -> None:
    """The referee shipped outputs go to in this process (a worker installs the link to the KForge process)."""
    global _referee
    _referee = referee


def judged_elsewhere() -> bool:
    """True in a harness worker: shipped outputs go to the KForge process, and on to the referee."""
    return isinstance(_referee, ChannelReferee)


def call_candidate(model: Callable[..., Any], args: list[Any]) -> Any:
    """The one place a candidate's forward is called from, for trials and timed runs alike."""
    return model(*args)


def ship(label: str, kind: str, seed: int, outputs: list[torch.Tensor], structure: tuple[Any, ...],
         changed_inputs: dict[str, torch.Tensor], workdir: Path, referee: Referee | None = None) -> Judged:
    """Write copies of ``outputs`` (and of the inputs the call changed) to a file, send it to be judged, and return
    the judgement."""
    return send(pack(label, kind, seed, outputs, structure, changed_inputs, workdir), referee)


def pack(label: str, kind: str, seed: int, outputs: list[torch.Tensor], structure: tuple[Any, ...],
         changed_inputs: dict[str, torch.Tensor], workdir: Path) -> Shipped:
    """Write copies of ``outputs`` (and of the inputs the call changed) to files: what :func:`send` has judged.
    Once it returns, the caller may free the tensors: the referee reads only the files."""
    directory = workdir / OUTPUTS_DIR
    directory.mkdir(parents=True, exist_ok=True)
    paths, digests = write_outputs(directory / f"{next(_numbers):05d}.pt", [host_copy(o) for o in outputs],
                                   {path: host_copy(t) for path, t in changed_inputs.items()})
    return Shipped(label, kind, seed, paths, digests, structure)


def send(shipped: Shipped, referee: Referee | None = None) -> Judged:
    """Send what :func:`pack` wrote to be judged, and wait for the judgement."""
    return _the_referee(referee).judge(shipped)


def conclude(kind: str, referee: Referee | None = None) -> Conclusion:
    """The referee's conclusion over the calls shipped so far (``verify`` or ``timing``)."""
    return _the_referee(referee).conclude(kind)


def _the_referee(referee: Referee | None) -> Referee:
    chosen = referee or _referee
    if chosen is None:
        raise RuntimeError("no referee: shipped outputs have nowhere to be judged")
    return chosen


class TimedChecks:
    """Which timed runs are checked: exactly ``count`` of ``runs``, each drawn after the run returned, every run
    as likely as any other to be one of them."""

    def __init__(self, count: int, runs: int) -> None:
        self.left = min(count, runs)
        self.runs_left = runs

    def draw(self) -> bool:
        """Whether the run that just returned is checked."""
        if self.runs_left <= 0:
            return False
        chosen = int.from_bytes(_urandom(8), "big") % self.runs_left < self.left
        self.runs_left -= 1
        self.left -= chosen
        return chosen


class LocalReferee:
    """Judges in this process: for stage hooks run outside a harness worker, where no KForge process waits."""

    def __init__(self, problem: Problem, device: Device, settings: HarnessSettings, backend: Backend) -> None:
        from .expected import expected_for
        from .judge import Judge

        self._judge = Judge(expected_for(problem, device, settings, backend), settings)

    def judge(self, shipped: Shipped) -> Judged:
        return self._judge.judge(shipped)

    def conclude(self, kind: str) -> Conclusion:
        return self._judge.conclude(kind)


class ChannelReferee:
    """The worker's link: each message goes to the KForge process as part of the request being served, which has
    the referee worker answer it."""

    def __init__(self, channel: Any, request_id: Callable[[], int | None]) -> None:
        self.channel = channel
        self.request_id = request_id

    def judge(self, shipped: Shipped) -> Judged:
        return self._ask(shipped, Judged)

    def conclude(self, kind: str) -> Conclusion:
        return self._ask(Conclude(kind), Conclusion)

    def _ask(self, message: Any, answer_type: type) -> Any:
        request_id = self.request_id()
        self.channel.send((request_id, message))
        answered_id, answer = self.channel.receive(trusted=True)
        if answered_id != request_id or not isinstance(answer, answer_type):
            raise RuntimeError(f"the KForge process answered {type(answer).__name__}, expected {answer_type.__name__}")
        return answer
