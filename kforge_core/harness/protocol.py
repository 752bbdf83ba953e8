"""The messages between the KForge process and a worker, and the private pipe that carries them.

Each message is a pickled object behind an 8-byte length. The pipe is a pair of file descriptors passed to the
worker (not its stdout), so nothing the candidate prints can corrupt it.

The worker runs untrusted code, so the KForge process never unpickles a worker's reply with plain ``pickle``:
:class:`ReplyUnpickler` only builds the plain-data classes that replies are made of.
"""

from __future__ import annotations

import enum
import io
import os
import pickle
import select
import signal
import struct
import threading
import time
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Mapping

from ..peaks import DevicePeaks
from ..plugins import PluginSelection
from ..records import Candidate, Failure, Flag, Problem, ShapeCheck, TrialError
from ..settings import HarnessSettings
from .cpu_placement import CpuPlacement
from .sandbox_plan import SandboxPlan

_HEADER = struct.Struct("!Q")
MAX_MESSAGE_BYTES = 1 << 30


class ChannelClosed(Exception):
    """The other end closed the pipe (for a worker: it exited or was killed)."""


class ChannelTimeout(Exception):
    """No complete message arrived before the deadline."""


# ------------------------------------------------------------------------------------------------ requests


# a worker's descriptors by role, in the order a template gets them (``worker_start.py``; the status pipe's end after
# them): the private pipe's ends, the lifeline, a candidate's stdout and stderr, the stack file, its own 1 and 2
WORKER_FD_ROLES = ("read", "write", "lifeline", "stdout", "stderr", "stacks", "own")


def worker_arguments(fds: Mapping[str, int]) -> list[str]:
    """A worker's arguments (``worker.main``) naming its descriptors ``fds``, by role (:data:`WORKER_FD_ROLES`)."""
    return ["--fds", f"{fds['read']},{fds['write']},{fds['lifeline']}",
            "--output", f"{fds['stdout']},{fds['stderr']},{fds['stacks']}"]


# the name (``/proc/PID/comm``) of a worker forked from a template, whose command line is the template's
WORKER_NAME = "kforge-worker"
STACK_SIGNAL = signal.SIGUSR2  # a worker dumps its threads' stacks on this signal (into the file --output names)
OUTPUTS_DIR = "outputs"  # the folder of a candidate's scratch directory its worker ships outputs in

@dataclass(frozen=True)
class WorkerInit:
    """The first message: everything a worker needs to serve candidates on one backend and device, for whichever
    problem it is prepared for (see :class:`Prepare`).

    :param environment: variables set in the worker's environment, beyond the KForge process's own (the
        device's ``runtime_environment``, and its ``visible_devices_env`` where the harness is bound to one unit).
    """

    sys_path: tuple[str, ...]
    selection: PluginSelection
    backend: str
    host_cpu: bool
    options: Any
    settings: HarnessSettings
    cache_dir: Path
    environment: tuple[tuple[str, str], ...] = ()
    sandbox: SandboxPlan | None = None  # the namespace sandbox the worker runs in; None: none applies
    preload: tuple[str, ...] = ()  # modules imported in the background from the start (the baseline worker's compiler)
    placement: CpuPlacement | None = None  # the host CPUs it runs and times on (``cpu_placement``); None: anywhere


@dataclass(frozen=True)
class PrebuildRequest:
    """What the build-ahead child needs (in ``REQUEST_FILE`` of its directory): what a worker is told (plugins,
    backend, options, cache), the problem and the candidate to build. It answers in ``RESULT_FILE``."""

    init: WorkerInit
    problem: Problem
    candidate: Candidate


REQUEST_FILE = "request.pickle"
RESULT_FILE = "result.json"
FILES_DIR = "files"


@dataclass(frozen=True)
class Prepare:
    """Serve candidates for ``problem`` from now on: compute its reference's outputs and input sets before any
    candidate code for it is imported. A warm worker takes a new problem this way; the previous problem's
    reference data is dropped."""

    problem: Problem


@dataclass(frozen=True)
class Begin:
    """Start serving ``candidate`` in ``workdir``: its files are written there and its output goes there."""

    candidate: Candidate
    workdir: Path


@dataclass(frozen=True)
class RunStage:
    """Call the stage hook ``stage`` ("compile", "verify" or "profile") for the current candidate."""

    stage: str


@dataclass(frozen=True)
class Time:
    """Time the current candidate (warm-up, timed runs, outputs of some runs checked again): the timed runs
    ``runs`` (start, stop), all of them when None; warm-up runs come before run 0; under ``timers`` (every timer
    the device has when empty)."""

    runs: tuple[int, int] | None = None
    timers: tuple[str, ...] = ()


@dataclass(frozen=True)
class Finish:
    """Check what the candidate left behind in the process and stop serving it."""


@dataclass(frozen=True)
class MeasureBaselines:
    """Time the problem's reference as-is ("eager") and under ``torch.compile`` ("compile"): the timed runs
    ``runs`` (start, stop), all when None; ``(0, 0)`` only builds them (compiles), ahead of their timed runs.
    ``held_ms``: each timed call waits that long after the baseline ran, inside the call (a call as long as a
    candidate's, for the outside clock's calibration: ``harness/host/outside_clock.py``)."""

    names: tuple[str, ...]
    runs: tuple[int, int] | None = None
    timers: tuple[str, ...] = ()  # as :class:`Time`'s
    held_ms: float = 0.0


@dataclass(frozen=True)
class BuildOnHost:
    """To the baseline worker: build the problem's ``Model`` (the one every baseline wraps) on the host now, and move
    it to the device only when the first baseline is built (``MeasureBaselines``). Its constructor is CPU work, tens
    of seconds for a model of gigabytes; so it runs while the candidate is compiled and verified, even where the
    baselines themselves get ready only after that (a problem large for the device). Answered with
    :class:`Prepared`."""


@dataclass(frozen=True)
class Expect:
    """To the referee worker (one that never imports candidate code): compute ``problem``'s expected outputs,
    from which it judges what candidates' workers ship (``worker/expected.py``). Answered with :class:`Prepared`.
    Without ``on_device`` they are kept in host memory whatever the problem's size (its candidates need the
    device to themselves)."""

    problem: Problem
    on_device: bool = True


@dataclass(frozen=True)
class JudgeBegin:
    """To the referee worker: the outputs shipped from now on are a new candidate's, in ``anchor / outputs``.

    :param anchor: a directory no worker can replace (where the candidates' workers have their homes).
    :param outputs: the candidate's :data:`OUTPUTS_DIR`, relative to ``anchor``: the referee reads shipped files
        only there, reaching them with no link followed (``safe_files``).
    """

    anchor: Path | None = None
    outputs: str = ""


@dataclass(frozen=True)
class Shipped:
    """One call's outputs, written by the candidate's worker the moment the call returned (``worker/shipping.py``).

    Sent by that worker in the middle of a stage, tagged with the request's id, and answered with
    :class:`Judged` once the KForge process had the referee worker judge it; sent on to the referee as a request.

    :param label: what the call was ("trial seed 42", "timed run 7").
    :param kind: ``"trial"`` (a correctness trial), ``"traced"`` (the operator-traced call), ``"timed"`` (a timed
        call: every one is checked) or ``"variant"`` (the call at one of the problem's shape variants).
    :param seed: the seed of the call's inputs.
    :param paths: the files holding the output leaves and the inputs the call changed (``output_files``; more than
        one where they would not fit the worker's file-size limit).
    :param digests: each file's SHA-256, taken as it was written: a file changed later is tampering.
    :param structure: how the output leaves nest (``values.flatten_output``).
    :param sample_seed: for a timed call, the KForge process's draw (:class:`CheckAnswer`): the files hold only the
        elements of each output it picks (``worker/samples.py``); None: the whole outputs.
    :param variant: for a ``"variant"`` call, the variant's name.
    """

    label: str
    kind: str
    seed: int
    paths: tuple[Path, ...]
    digests: tuple[str, ...]
    structure: tuple[Any, ...]
    sample_seed: int | None = None
    variant: str = ""


@dataclass(frozen=True)
class ShippedBatch:
    """A block's timed calls, shipped together once its last call was timed: one message each way instead of one per
    call (each message wakes three processes in turn). Answered with :class:`JudgedBatch`, in the same order."""

    items: tuple[Shipped, ...]


@dataclass(frozen=True)
class CheckAsk:
    """Sent by a candidate's worker in the middle of its timing, once a timed call returned and a copy of its
    outputs was taken (inside the call's outside-clocked interval): which of their elements go to the referee.
    Answered by the KForge process with :class:`CheckAnswer`.

    :param label: the call (``timed run 7 (events)``); :param seed: the seed of its inputs.
    """

    label: str
    seed: int


@dataclass(frozen=True)
class CheckAnswer:
    """The KForge process's draw for one timed call, made after the call returned, from its own randomness."""

    sample_seed: int


@dataclass(frozen=True)
class Judged:
    """The referee's answer to one :class:`Shipped` call."""

    passed: bool
    failure: Failure | None = None
    message: str = ""
    max_abs_error: float = 0.0
    max_rel_error: float = 0.0
    outside_share: float = 0.0  # the share of the compared elements outside tolerance (``Comparison``)


@dataclass(frozen=True)
class JudgedBatch:
    """The referee's answers to a :class:`ShippedBatch`, in its order."""

    items: tuple[Judged, ...]


@dataclass(frozen=True)
class Conclude:
    """Sent by a candidate's worker after its trials (``kind`` "verify") or timed runs ("timing"), and then by the
    KForge process to the referee: what the calls judged so far add up to (:class:`Conclusion`)."""

    kind: str


@dataclass(frozen=True)
class Conclusion:
    """What the referee found over a candidate's shipped calls: the trials in order, the cheats seen across calls
    (cached, constant outputs, changed inputs, files changed after they were written), the precision reached, and
    how it did at the problem's shape variants (None: none were checked)."""

    trials: tuple[TrialError, ...] = ()
    flags: tuple[Flag, ...] = ()
    notes: tuple[str, ...] = ()
    failure: Failure | None = None
    message: str = ""
    precision_bits: float | None = None
    shapes: ShapeCheck | None = None


# --------------------------------------------------------------------------------------------------- replies


@dataclass(frozen=True)
class Wait:
    """Sent by a worker in the middle of a request, tagged with the request's id: a wait of ``kind`` ("call" or
    "build") begins (``entering``) or ends, so the KForge process applies that wait's time limit
    (``harness.host.deadline``)."""

    kind: str
    what: str
    entering: bool
    acknowledge: bool = False  # the worker waits for :class:`Acknowledged` before it goes on (a timed call)


@dataclass(frozen=True)
class Acknowledged:
    """The KForge process noted a :class:`Wait` that asked for it (by its own clock, before the worker goes on)."""


@dataclass(frozen=True)
class Prepared:
    """The reply to :class:`Prepare`: what was prepared, and the reference's median forward time on the device."""

    summary: str
    reference_s: float


@dataclass(frozen=True)
class DeviceFacts:
    """What a worker found out about its device when it started.

    :param device: the device with its index ("cuda:0", "cpu").
    :param name: what it is ("NVIDIA H100 80GB HBM3").
    :param l2_bytes: its last-level cache (0: none to flush, or unknown).
    :param flush_bytes: what timing writes to flush caches between runs (0: no flush).
    :param synchronize: how timing waits for the device.
    :param timer: how timing measures.
    :param facts: what prompts and profile summaries may quote (``Device.facts``).
    :param memory_bytes: the device's memory (0: unknown).
    :param peaks: its peak bandwidth and FLOP/s, with their sources (``Device.peaks``); None: unknown. Read before
        any candidate code ran in the worker, so the KForge process may judge figures by them.
    """

    device: str
    name: str
    l2_bytes: int
    torch_version: str
    pid: int
    flush_bytes: int = 0
    synchronize: str = ""
    timer: str = ""
    facts: tuple[tuple[str, str], ...] = ()
    memory_bytes: int = 0
    peaks: DevicePeaks | None = None


@dataclass(frozen=True)
class Reply:
    """A worker's answer: a value, or the failure it met (with a message for the agent)."""

    value: Any = None
    failure: Failure | None = None
    message: str = ""
    detail: str = ""  # the full traceback, for debugging the harness


@dataclass(frozen=True)
class TimingOutcome:
    """The candidate's timed runs: statistics, what the method was, and the flags raised while timing."""

    samples_ms: tuple[float, ...]  # the headline timer's (``method.headline``)
    method: Any  # a TimingMethod
    flags: tuple[Flag, ...] = ()
    notes: tuple[str, ...] = ()
    figures: tuple[tuple[str, tuple[float, ...]], ...] = ()  # every timer's samples: (timer, samples)
    device_streams: int = 0  # the streams the candidate's runs involved, the caller's among them (0: not known)
    launch_bound: tuple[str, ...] = ()  # the timers whose figure counted the host's launch (``TimedRuns``)


@dataclass(frozen=True)
class FinishReport:
    """What the candidate left behind: flags (tampering, precision switches) and whether the process is clean."""

    flags: tuple[Flag, ...] = ()
    clean: bool = True
    notes: tuple[str, ...] = field(default=())
    switches: tuple[str, ...] = ()  # precision switches changed within the precision contract
    limit: str = ""  # a limit of the worker the candidate reached (its scratch space left full), named


@dataclass(frozen=True)
class BaselineResults:
    """Each baseline's samples, or why it could not be measured (and, for one read from the baseline cache,
    a note saying so)."""

    samples_ms: tuple[tuple[str, tuple[float, ...]], ...]  # the headline timer's, per baseline
    errors: tuple[tuple[str, str], ...]
    method: Any  # a TimingMethod
    notes: tuple[tuple[str, str], ...] = ()
    figures: tuple[tuple[str, tuple[tuple[str, tuple[float, ...]], ...]], ...] = ()  # baseline -> every timer's
    launch_bound: tuple[tuple[str, tuple[str, ...]], ...] = ()  # baseline -> the timers that counted its launch


# --------------------------------------------------------------------------------------------------- framing


class Channel:
    """One end of the private pipe pair: ``send`` writes to ``write_fd``, ``receive`` reads from ``read_fd``."""

    def __init__(self, read_fd: int, write_fd: int) -> None:
        self.read_fd = read_fd
        self.write_fd = write_fd
        self._sending = threading.Lock()  # a Wait sent from another thread (a JIT's hook) never splits a message

    def send(self, message: Any) -> None:
        data = pickle.dumps(message, protocol=pickle.HIGHEST_PROTOCOL)
        view = memoryview(_HEADER.pack(len(data)) + data)
        with self._sending:
            while view:
                written = os.write(self.write_fd, view)
                view = view[written:]

    def readable(self) -> bool:
        """True when a message (or the end of the pipe) is waiting to be read."""
        try:
            return bool(select.select([self.read_fd], [], [], 0)[0])
        except (OSError, ValueError):
            return True  # closed: the next receive says so

    def receive(self, *, deadline: float | None = None, trusted: bool = False) -> Any:
        """The next message; ``trusted`` False (the KForge side) restricts what may be unpickled."""
        (length,) = _HEADER.unpack(self._read_exactly(_HEADER.size, deadline))
        if length > MAX_MESSAGE_BYTES:
            raise ChannelClosed(f"message of {length} bytes is larger than the limit")
        data = self._read_exactly(length, deadline)
        if trusted:
            return pickle.loads(data)
        return ReplyUnpickler(io.BytesIO(data)).load()

    def _read_exactly(self, count: int, deadline: float | None) -> bytes:
        chunks = []
        while count:
            if deadline is not None:  # past it, what is already waiting is still read
                remaining = max(0.0, deadline - time.monotonic())
                ready, _, _ = select.select([self.read_fd], [], [], remaining)
                if not ready:
                    raise ChannelTimeout()
            chunk = os.read(self.read_fd, min(count, 1 << 20))
            if not chunk:
                raise ChannelClosed()
            chunks.append(chunk)
            count -= len(chunk)
        return b"".join(chunks)

    def close(self) -> None:
        """Close both ends, once: a second close could hit a descriptor that another thread's new pipe has
        taken the number of since (harnesses run side by side in ``kforge bench``)."""
        for fd in (self.read_fd, self.write_fd):
            if fd >= 0:
                try:
                    os.close(fd)
                except OSError:
                    pass
        self.read_fd = self.write_fd = -1


_ALLOWED_MODULES = ("kforge_core.records", "kforge_core.harness.protocol", "kforge_core.harness.verdict",
                    "kforge_core.peaks")
_ALLOWED_GLOBALS = {
    ("pathlib", "PosixPath"), ("pathlib", "PurePosixPath"), ("pathlib", "Path"),
    ("pathlib._local", "PosixPath"), ("pathlib._local", "PurePosixPath"), ("pathlib._local", "Path"),
    ("builtins", "set"), ("builtins", "frozenset"), ("builtins", "complex"),
    ("numpy.core.multiarray", "scalar"), ("numpy._core.multiarray", "scalar"), ("numpy", "dtype"),
}


class ReplyUnpickler(pickle.Unpickler):
    """Builds only the harness's plain-data records, so a reply forged by candidate code cannot run code here."""

    def find_class(self, module: str, name: str) -> Any:
        if "." not in name and (module, name) in _ALLOWED_GLOBALS:
            return super().find_class(module, name)
        if "." not in name and module in _ALLOWED_MODULES:
            found = super().find_class(module, name)
            # records only: a dataclass or an enum defined there, never a function or an imported module
            if isinstance(found, type) and found.__module__ == module and (
                hasattr(found, "__dataclass_fields__") or issubclass(found, enum.Enum)
            ):
                return found
        raise pickle.UnpicklingError(f"a worker reply may not contain {module}.{name}")
