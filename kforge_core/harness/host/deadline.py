"""How long each wait of a stage may last, and when the one under way runs out. Runs in the KForge process.

A stage request to a worker has the stage's own limit. Inside it, the worker marks its calls of ``forward`` and
its builds (:mod:`kforge_core.timing.stage_timer`), and each gets its own limit:

* a **call** gets ``call_s``: by default a small multiple of the reference's own time with a floor of
  :data:`CALL_FLOOR_S`, so a forward that never returns on a millisecond problem is a timeout in seconds, not at the
  end of a stage limit made for builds;
* a **build** gets ``build_s`` (``harness.compile_timeout_s``), whatever it is inside, and time spent building does
  not count against the call or the stage it happens in (a JIT on the first call). The builds of one request
  share that one budget, so marks alone can never make a request last longer than its stage's limit plus one
  build timeout.

Limits follow what the worker is doing (:mod:`kforge_core.harness.host.activity`), so that compiling is told from
hanging:

* a **call** past its limit is looked at before it is ended: when the worker is busy compiling (a compiler running,
  compiler frames on its stack: a ``torch.compile``, TorchScript or an autotuner that no mark announced), the call is
  allowed up to the build limit, looked at again every ``idle_s``, and the verdict's notes say how long it took and
  why it was allowed; a call that is idle or busy with anything else ends at its limit, as before;
* a **build** (and, in the compile stage, the import of the candidate) is looked at every ``idle_s``: one that
  used no CPU time since the last look and is not compiling is an idle hang and ends there, not at the build limit;
  a busy build keeps its budget.

:class:`StageTimeouts` derives the limits from the settings and the reference's measured time; settings that are
set (non-zero) are used as they are.
"""

from __future__ import annotations

from dataclasses import dataclass, field, replace
from typing import Protocol

from ...settings import HarnessSettings

CALL_FLOOR_S = 15.0  # no call of forward is cut shorter than this by default
CALL_MULTIPLE = 20.0  # ... nor before it has run this many times the reference's time
STAGE_ALLOWANCE_S = 60.0  # the harness's own work in a stage besides the candidate's calls (comparisons, traces)
IDLE_CHECK_MAX_S = 30.0  # a build or an import is looked at this often at least (the call limit, when shorter)
VERIFY_CALLS_BEYOND_TRIALS = 4  # the operator trace, and trial 0 again under other parameter initialisations


@dataclass(frozen=True)
class WaitLimits:
    """The limits of the waits a worker reports inside a request: each call, and all builds together.

    :param idle_s: how often a build (and, with ``watch_request``, the request outside its calls) is looked at: one
        during which the worker used no CPU time and was not compiling is an idle hang, ended then; 0: never.
    :param watch_request: the request itself is watched like a build (the compile stage, where importing the
        candidate runs its module's code).
    """

    call_s: float
    build_s: float
    idle_s: float = 0.0
    watch_request: bool = False


@dataclass(frozen=True)
class StageTimeouts:
    """The limits of one candidate's stages, in seconds, and the reference's forward time they follow."""

    reference_s: float
    build_s: float
    call_s: float
    compile_s: float
    verify_s: float
    timing_s: float
    profile_s: float

    @classmethod
    def derive(cls, settings: HarnessSettings, reference_s: float, variants: int = 0) -> StageTimeouts:
        """The limits for a problem whose reference forward takes ``reference_s`` seconds on the device, and which
        verification also calls at ``variants`` shape variants (each counted as two calls: a doubled one is
        larger)."""
        call = settings.call_timeout_s or max(CALL_FLOOR_S, CALL_MULTIPLE * reference_s)
        verify_calls = settings.trials + VERIFY_CALLS_BEYOND_TRIALS + 2 * variants
        timing_calls = settings.warmup + settings.repetitions
        return cls(
            reference_s=reference_s,
            build_s=settings.compile_timeout_s,
            call_s=call,
            compile_s=settings.compile_timeout_s,
            verify_s=settings.verify_timeout_s or STAGE_ALLOWANCE_S + verify_calls * call,
            timing_s=settings.timing_timeout_s or STAGE_ALLOWANCE_S + timing_calls * call,
            profile_s=settings.profile_timeout_s,
        )

    @property
    def waits(self) -> WaitLimits:
        return WaitLimits(self.call_s, self.build_s, idle_s=min(self.call_s, IDLE_CHECK_MAX_S))

    @property
    def compile_waits(self) -> WaitLimits:
        """The compile stage's: importing the candidate is watched for idle hangs like a build."""
        return replace(self.waits, watch_request=True)

    def describe(self) -> str:
        return (f"the reference's forward {self.reference_s * 1e3:.3g} ms; a call of forward {self.call_s:g} s, a "
                f"build {self.build_s:g} s; stages: compile "
                f"{self.compile_s:g} s, verify {self.verify_s:g} s, timing {self.timing_s:g} s, profile "
                f"{self.profile_s:g} s")


class Probe(Protocol):
    """What the deadline asks about the worker (:class:`~kforge_core.harness.host.activity.ActivityProbe`)."""

    def sample(self) -> tuple[float, float | None]: ...

    def cores(self, since: tuple[float, float | None] | None = None) -> float | None: ...

    def compiling(self) -> str: ...


BUDGET_RAN_OUT = "the problem's time budget ran out (harness.problem_budget_s)"
BUSY_CORES = 0.05  # below this share of one core, a worker is idle


@dataclass
class _Wait:
    kind: str  # "call" or "build"
    what: str
    start: float
    built_inside: float = 0.0  # seconds of builds nested in this wait (closed ones)
    limit_at: float = 0.0  # a call: when it ends (before built_inside); a build: when it is looked at next
    since: tuple[float, float | None] | None = None  # a build: the activity sample of the last look
    allowed: str = ""  # a call allowed past its limit: what showed the worker compiling
    grace: bool = False  # a call that compiled, then ran on: given one more call limit after the compile


@dataclass
class StageDeadline:
    """The deadline of one request, following the waits the worker reports.

    :param what: the stage ("verify"), for the message.
    :param stage_s: the stage's limit; build time does not count against it.
    :param limits: the limits of the waits the worker reports; None: the request has only the stage's limit, and
        reported waits change nothing.
    :param start: ``time.monotonic()`` when the request was sent.
    :param probe: how to look at the worker when a limit runs out; None: limits apply as set.
    """

    what: str
    stage_s: float
    limits: WaitLimits | None
    start: float
    probe: Probe | None = None
    hard_stop: float | None = None  # monotonic time past which nothing may go on (a problem's budget)
    notes: list[str] = field(default_factory=list)  # calls allowed past their limit, and why
    _waits: list[_Wait] = field(default_factory=list)
    _built: float = 0.0  # seconds of closed builds in this request
    _request: _Wait | None = None  # the request itself, when it is watched like a build
    _excused: float = 0.0  # seconds calls ran past their limit while compiling: not counted against the stage

    def __post_init__(self) -> None:
        if self._watching() and self.limits.watch_request:
            what = f"{self.what} (importing and building the candidate)"
            self._request = self._watched(_Wait("build", what, self.start))

    def enter(self, kind: str, what: str, now: float) -> None:
        if self.limits is None or kind not in ("call", "build"):
            return
        wait = _Wait(kind, what, now, limit_at=now + self.limits.call_s)
        self._waits.append(self._watched(wait) if kind == "build" else wait)

    def leave(self, now: float) -> None:
        if not self._waits:
            return
        wait = self._waits.pop()
        if wait.kind == "build" and self._open_build() is None:  # builds inside a build count once
            seconds = now - wait.start
            self._built += seconds
            for outer in self._waits:
                outer.built_inside += seconds
        for watched in (self._request, self._open_build()):  # a look measures from the end of a call or build
            if watched is not None and watched.since is not None:
                self._watched(watched)
        if wait.allowed:
            self._excused += max(0.0, now - wait.start - wait.built_inside - self.limits.call_s)
            self.notes.append(
                f"{wait.what} took {now - wait.start - wait.built_inside:.1f} s, past the call limit of "
                f"{self.limits.call_s:g} s: it was allowed up to the build limit ({self.limits.build_s:g} s) "
                f"because the worker was compiling ({wait.allowed})")

    def expires(self) -> tuple[float, str]:
        """``(monotonic time, message)`` of the limit or look that comes first, as the waits stand now."""
        at, message, _ = self._next()
        return at, message

    def _next(self) -> tuple[float, str, _Wait | None]:
        at, message, wait = self._next_limit()
        if self.hard_stop is not None and self.hard_stop <= at:
            return self.hard_stop, f"{self.what}: {BUDGET_RAN_OUT}", None
        return at, message, wait

    def expired(self, now: float) -> str | None:
        """The time of :meth:`expires` has come: the message to end the request with, or None when a look at the
        worker allowed it more time."""
        at, message, wait = self._next()
        if wait is None or self.probe is None:
            return message
        if wait.kind == "build":
            return self._look_at_build(wait, now)
        return self._look_at_call(wait, now, message)

    # ------------------------------------------------------------------------------------------ internals

    def _watching(self) -> bool:
        return self.probe is not None and self.limits is not None and self.limits.idle_s > 0

    def _watched(self, wait: _Wait) -> _Wait:
        if self._watching():
            wait.since = self.probe.sample()
            wait.limit_at = wait.since[0] + self.limits.idle_s
        return wait

    def _next_limit(self) -> tuple[float, str, _Wait | None]:
        """The first limit to come, its message, and the wait to look at before ending it (None: end it)."""
        limits = self.limits
        build = self._open_build()
        if build is not None and limits is not None:
            if self._built:
                late = (f"{build.what}: with the builds before it, building took more than {limits.build_s:g} s "
                        "(the build timeout, harness.compile_timeout_s, covers the builds of a stage together)")
            else:
                late = f"{build.what} did not finish within {limits.build_s:g} s (the build timeout, " \
                       "harness.compile_timeout_s)"
            final = build.start + limits.build_s - self._built
            if build.since is not None and build.limit_at < final:
                return build.limit_at, late, build
            return final, late, None
        stage = self.start + self.stage_s + self._built + self._excused
        late = f"{self.what} did not finish within {self.stage_s:g} s"
        call = next((w for w in reversed(self._waits) if w.kind == "call"), None)
        if call is not None and limits is not None:
            call_at = min(call.limit_at, call.start + limits.build_s + limits.call_s) + call.built_inside
            if call_at < stage or call.allowed:  # an allowed call's compile does not count against the stage
                if call.allowed:
                    late = (f"{call.what} did not return within {call_at - call.start - call.built_inside:.0f} s "
                            f"(past the call timeout of {limits.call_s:g} s while compiling)")
                else:
                    late = f"{call.what} did not return within {limits.call_s:g} s (the call timeout, " \
                           "harness.call_timeout_s)"
                return call_at, late, call
        request = self._request
        if call is None and request is not None and request.limit_at < stage:
            return request.limit_at, late, request
        return stage, late, None

    def _look_at_build(self, wait: _Wait, now: float) -> str | None:
        """A build (or the watched request) is looked at: idle and not compiling is a hang."""
        cores = self.probe.cores(wait.since)
        if cores is not None and cores < BUSY_CORES and not self.probe.compiling():
            return (f"{wait.what} made no progress: the worker used no CPU time for {now - wait.since[0]:.0f} s and "
                    "was not compiling (an idle hang: a sleep, a wait on something that never comes, a deadlock)")
        self._watched(wait)
        return None

    def _look_at_call(self, wait: _Wait, now: float, late: str) -> str | None:
        """A call past its limit: a worker busy compiling may go on, up to the build limit."""
        limits = self.limits
        if wait.allowed and now >= wait.start + wait.built_inside + limits.build_s:
            return f"{late}: it was allowed the build limit ({limits.build_s:g} s) while compiling ({wait.allowed})"
        cores = self.probe.cores()
        compiling = self.probe.compiling() if cores is not None and cores >= BUSY_CORES else ""
        now = max(now, self.probe.sample()[0])  # looking took time
        if compiling:
            wait.allowed, wait.grace = compiling, False
            wait.limit_at = now + limits.idle_s - wait.built_inside
            return None
        if wait.allowed and not wait.grace:
            wait.grace = True  # it compiled; what runs after the compile gets one call limit of its own
            wait.limit_at = now + limits.call_s - wait.built_inside
            return None
        return late + (f" (it compiled earlier: {wait.allowed})" if wait.allowed else "")

    def _open_build(self) -> _Wait | None:
        return next((w for w in self._waits if w.kind == "build"), None)
