"""How long each wait of a stage may last, and when the one under way runs out. Runs in the KForge process.

A stage request to a worker has the stage's own limit. Inside it, the worker marks its calls of ``forward`` and
its builds (:mod:`kforge_core.stage_timer`), and each gets its own limit:

* a **call** gets ``call_s``: by default a small multiple of the reference's own time with a floor of
  :data:`CALL_FLOOR_S`, so a forward that never returns on a millisecond problem is a timeout in seconds, not at the
  end of a stage limit made for builds;
* a **build** gets ``build_s`` (``harness.compile_timeout_s``), whatever it is inside, and time spent building does
  not count against the call or the stage it happens in (a JIT on the first call). The builds of one request
  share that one budget, so marks alone can never make a request last longer than its stage's limit plus one
  build timeout.

:class:`StageTimeouts` derives the limits from the settings and the reference's measured time; settings that are
set (non-zero) are used as they are.
"""

from __future__ import annotations

from dataclasses import dataclass, field

from ...settings import HarnessSettings

CALL_FLOOR_S = 15.0  # no call of forward is cut shorter than this by default
CALL_MULTIPLE = 20.0  # ... nor before it has run this many times the reference's time
STAGE_ALLOWANCE_S = 60.0  # the harness's own work in a stage besides the candidate's calls (comparisons, traces)
VERIFY_CALLS_BEYOND_TRIALS = 4  # the operator trace, and trial 0 again under other parameter initialisations


@dataclass(frozen=True)
class WaitLimits:
    """The limits of the waits a worker reports inside a request: each call, and all builds together."""

    call_s: float
    build_s: float


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
    def derive(cls, settings: HarnessSettings, reference_s: float) -> StageTimeouts:
        """The limits for a problem whose reference forward takes ``reference_s`` seconds on the device."""
        call = settings.call_timeout_s or max(CALL_FLOOR_S, CALL_MULTIPLE * reference_s)
        verify_calls = settings.trials + VERIFY_CALLS_BEYOND_TRIALS
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
        return WaitLimits(self.call_s, self.build_s)

    def describe(self) -> str:
        return (f"the reference's forward {self.reference_s * 1e3:.3g} ms; a call of forward {self.call_s:g} s, a "
                f"build {self.build_s:g} s; stages: compile "
                f"{self.compile_s:g} s, verify {self.verify_s:g} s, timing {self.timing_s:g} s, profile "
                f"{self.profile_s:g} s")


@dataclass
class _Wait:
    kind: str  # "call" or "build"
    what: str
    start: float
    built_inside: float = 0.0  # seconds of builds nested in this wait (closed ones)


@dataclass
class StageDeadline:
    """The deadline of one request, following the waits the worker reports.

    :param what: the stage ("verify"), for the message.
    :param stage_s: the stage's limit; build time does not count against it.
    :param limits: the limits of the waits the worker reports; None: the request has only the stage's limit, and
        reported waits change nothing.
    :param start: ``time.monotonic()`` when the request was sent.
    """

    what: str
    stage_s: float
    limits: WaitLimits | None
    start: float
    _waits: list[_Wait] = field(default_factory=list)
    _built: float = 0.0  # seconds of closed builds in this request

    def enter(self, kind: str, what: str, now: float) -> None:
        if self.limits is not None and kind in ("call", "build"):
            self._waits.append(_Wait(kind, what, now))

    def leave(self, now: float) -> None:
        if not self._waits:
            return
        wait = self._waits.pop()
        if wait.kind == "build" and self._open_build() is None:  # builds inside a build count once
            seconds = now - wait.start
            self._built += seconds
            for outer in self._waits:
                outer.built_inside += seconds

    def expires(self) -> tuple[float, str]:
        """``(monotonic time, message)`` of the limit that ends first, as the waits stand now."""
        build = self._open_build()
        if build is not None and self.limits is not None:
            build_s = self.limits.build_s
            if self._built:
                late = (f"{build.what}: with the builds before it, building took more than {build_s:g} s (the "
                        "build timeout, harness.compile_timeout_s, covers the builds of a stage together)")
            else:
                late = f"{build.what} did not finish within {build_s:g} s (the build timeout, " \
                       "harness.compile_timeout_s)"
            return build.start + build_s - self._built, late
        stage = self.start + self.stage_s + self._built
        call = next((w for w in reversed(self._waits) if w.kind == "call"), None)
        if call is not None and self.limits is not None:
            call_s = self.limits.call_s
            call_at = call.start + call_s + call.built_inside
            if call_at < stage:
                return call_at, (f"{call.what} did not return within {call_s:g} s (the call timeout, "
                                 "harness.call_timeout_s)")
        return stage, f"{self.what} did not finish within {self.stage_s:g} s"

    def _open_build(self) -> _Wait | None:
        return next((w for w in self._waits if w.kind == "build"), None)
