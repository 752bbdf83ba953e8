"""Every call of a candidate goes through :func:`call_candidate`; the outputs of the calls that are checked leave
the process the moment the call returned (:func:`ship`), to be judged where the candidate cannot reach.

A correctness trial and a timed run are the same call: the same function, the same frames under the candidate's
forward. Every timed call is checked: once it returned and its outputs were copied, the worker asks the KForge
process which of their elements to ship (:func:`ask_check`); the KForge process draws them from its own randomness,
so nothing in this process decides what is looked at, and no call can know it beforehand.

Shipping writes the output leaves (copies, in host memory) and the inputs the call changed to files in the
candidate's scratch directory (``output_files``: as many as the worker's file-size limit needs), each with its
SHA-256 taken as it was written, and sends a :class:`Shipped` message to the
KForge process at once; the referee's :class:`Judged` answer comes back, read at once (:func:`send`) or once the
caller has done something else meanwhile (:func:`send_ahead`: a trial's outputs are judged while the next trial
runs). Nothing here holds an expected output. Stage
hooks run outside a harness worker (a plugin's own tools) have no KForge process to send to: their calls are judged
in their own process (:class:`LocalReferee`).
"""

from __future__ import annotations

import itertools
import os
from collections import deque
from pathlib import Path
from typing import TYPE_CHECKING, Any, Callable, Protocol

import torch

from ..call_kinds import TIMED, TRACED, TRIAL  # noqa: F401 - what a shipped call was, named here for its callers
from ..protocol import (
    OUTPUTS_DIR, Acknowledged, CheckAnswer, CheckAsk, Conclude, Conclusion, Judged, JudgedBatch, Shipped, ShippedBatch,
    Wait,
)
from .host_copies import host_copy
from .output_files import write_outputs

if TYPE_CHECKING:
    from ...devices.harness_device import HarnessDevice
    from ...records import Backend, Problem
    from ...settings import HarnessSettings

_urandom = os.urandom  # bound before any candidate is imported


class Referee(Protocol):
    """Where shipped outputs are judged."""

    def judge(self, shipped: Shipped) -> Judged: ...

    def judge_later(self, shipped: Shipped) -> Callable[[], Judged]: ...

    def conclude(self, kind: str) -> Conclusion: ...

    def ask_check(self, ask: CheckAsk) -> CheckAnswer: ...

    def judge_batch(self, batch: ShippedBatch) -> JudgedBatch: ...


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
         changed_inputs: dict[str, torch.Tensor], workdir: Path, referee: Referee | None = None,
         sample_seed: int | None = None) -> Judged:
    """Write copies of ``outputs`` (and of the inputs the call changed) to a file, send it to be judged, and return
    the judgement."""
    return send(pack(label, kind, seed, outputs, structure, changed_inputs, workdir, sample_seed), referee)


def pack(label: str, kind: str, seed: int, outputs: list[torch.Tensor], structure: tuple[Any, ...],
         changed_inputs: dict[str, torch.Tensor], workdir: Path, sample_seed: int | None = None,
         variant: str = "") -> Shipped:
    """Write copies of ``outputs`` (and of the inputs the call changed) to files: what :func:`send` has judged.
    Once it returns, the caller may free the tensors: the referee reads only the files. With ``sample_seed`` the
    outputs are the elements the KForge process drew (``samples.sampled``), and the referee draws the same;
    ``variant`` names the shape variant of a call at one."""
    directory = workdir / OUTPUTS_DIR
    directory.mkdir(parents=True, exist_ok=True)
    paths, digests = write_outputs(directory / f"{next(_numbers):05d}.pt", [host_copy(o) for o in outputs],
                                   {path: host_copy(t) for path, t in changed_inputs.items()})
    return Shipped(label, kind, seed, paths, digests, structure, sample_seed, variant)


def send(shipped: Shipped, referee: Referee | None = None) -> Judged:
    """Send what :func:`pack` wrote to be judged, and wait for the judgement."""
    return _the_referee(referee).judge(shipped)


def send_ahead(shipped: Shipped, referee: Referee | None = None) -> Callable[[], Judged]:
    """Send what :func:`pack` wrote to be judged, and return at once: calling what is returned waits for the
    judgement. Answers are read in the order their calls were sent."""
    return _the_referee(referee).judge_later(shipped)


def send_all(shipped: list[Shipped], referee: Referee | None = None) -> list[Judged]:
    """Send what :func:`pack` wrote for several calls to be judged in one message, and wait for the judgements."""
    if not shipped:
        return []
    return list(_the_referee(referee).judge_batch(ShippedBatch(tuple(shipped))).items)


def ask_check(label: str, seed: int, referee: Referee | None = None) -> int:
    """The KForge process's draw for the timed call ``label`` that just returned: the seed of the elements of its
    outputs that are shipped (``samples.sampled``)."""
    return _the_referee(referee).ask_check(CheckAsk(label, seed)).sample_seed


def conclude(kind: str, referee: Referee | None = None) -> Conclusion:
    """The referee's conclusion over the calls shipped so far (``verify`` or ``timing``)."""
    return _the_referee(referee).conclude(kind)


def _the_referee(referee: Referee | None) -> Referee:
    chosen = referee or _referee
    if chosen is None:
        raise RuntimeError("no referee: shipped outputs have nowhere to be judged")
    return chosen


class LocalReferee:
    """Judges in this process: for stage hooks run outside a harness worker, where no KForge process waits."""

    def __init__(self, problem: Problem, device: HarnessDevice, settings: HarnessSettings, backend: Backend) -> None:
        from .expected import expected_for
        from .judge import Judge

        self._judge = Judge(expected_for(problem, device, settings, backend), settings)

    def judge(self, shipped: Shipped) -> Judged:
        return self._judge.judge(shipped)

    def judge_later(self, shipped: Shipped) -> Callable[[], Judged]:
        judged = self._judge.judge(shipped)  # in this process: judged now, nothing to overlap with
        return lambda: judged

    def conclude(self, kind: str) -> Conclusion:
        return self._judge.conclude(kind)

    def ask_check(self, ask: CheckAsk) -> CheckAnswer:
        return CheckAnswer(int.from_bytes(_urandom(8), "big"))  # no KForge process here: this one draws

    def judge_batch(self, batch: ShippedBatch) -> JudgedBatch:
        return JudgedBatch(tuple(self._judge.judge(item) for item in batch.items))


class ChannelReferee:
    """The worker's link: each message goes to the KForge process as part of the request being served, which has
    the referee worker answer it, in the order the messages were sent; an answer read before its asker wanted it
    waits here for it."""

    def __init__(self, channel: Any, request_id: Callable[[], int | None]) -> None:
        self.channel = channel
        self.request_id = request_id
        self._asked: deque[tuple[int, int | None, type]] = deque()  # ticket, request id, answer type: not read yet
        self._answers: dict[int, Any] = {}  # tickets read before they were waited for
        self._tickets = itertools.count()

    def judge(self, shipped: Shipped) -> Judged:
        return self._answer(self._ask(shipped, Judged))

    def judge_later(self, shipped: Shipped) -> Callable[[], Judged]:
        ticket = self._ask(shipped, Judged)
        return lambda: self._answer(ticket)

    def conclude(self, kind: str) -> Conclusion:
        return self._answer(self._ask(Conclude(kind), Conclusion))

    def ask_check(self, ask: CheckAsk) -> CheckAnswer:
        return self._answer(self._ask(ask, CheckAnswer))

    def judge_batch(self, batch: ShippedBatch) -> JudgedBatch:
        return self._answer(self._ask(batch, JudgedBatch))

    def acknowledged(self, wait: Wait) -> None:
        """Send a mark and wait until the KForge process has noted it (``StageTimer.timed``)."""
        self._answer(self._ask(wait, Acknowledged))

    def _ask(self, message: Any, answer_type: type) -> int:
        request_id = self.request_id()
        self.channel.send((request_id, message))
        ticket = next(self._tickets)
        self._asked.append((ticket, request_id, answer_type))
        return ticket

    def _answer(self, ticket: int) -> Any:
        while ticket not in self._answers:
            if not self._asked:
                raise RuntimeError("an answer was waited for twice")
            read, request_id, answer_type = self._asked.popleft()
            answered_id, answer = self.channel.receive(trusted=True)
            if answered_id != request_id or not isinstance(answer, answer_type):
                raise RuntimeError(f"the KForge process answered {type(answer).__name__}, expected "
                                   f"{answer_type.__name__}")
            self._answers[read] = answer
        return self._answers.pop(ticket)
