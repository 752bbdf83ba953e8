"""The cheat flags: their codes, what each catches, and whether the active policy lets it block.

A flag that blocks makes the verdict ``Failure.CHEAT``. Which flags block:

* ``reference_call`` and ``input_mutation`` follow ``harness.cheat_policy`` (``strict`` blocks, ``report`` only
  flags): a candidate may call PyTorch for part of the work, or work in place, on purpose.
* ``precision_downgrade`` follows ``harness.precision_policy``.
* ``shape_specific`` follows ``harness.shapes`` (``strict`` blocks, ``report`` only flags): a kernel written for
  one size only may be all a user wants.
* The others always block, because they make the measurement itself untrustworthy.
* ``insensitive_problem`` is about the problem, not the candidate, and never blocks; evidence found only in the
  candidate's source (``Flag.message`` starts with "source:") never blocks either.
"""

from __future__ import annotations

from typing import Iterable

from ..records import Flag
from ..settings import HarnessSettings

STALE_OUTPUT = "stale_output"
ASYNC_OUTPUT = "async_output"
CACHED_OUTPUT = "cached_output"
CONSTANT_OUTPUT = "constant_output"
INSENSITIVE_PROBLEM = "insensitive_problem"
REFERENCE_CALL = "reference_call"
TAMPERING = "tampering"
TENSOR_SUBCLASS = "tensor_subclass"
PRECISION_DOWNGRADE = "precision_downgrade"
L2_PERSISTENCE = "l2_persistence"
INPUT_MUTATION = "input_mutation"
BUILD_ERROR_CAUGHT = "build_error_caught"
PERSISTENT_OUTPUT = "persistent_output"
TIMING_MISMATCH = "timing_mismatch"
FASTER_THAN_HARDWARE = "faster_than_hardware"
SHAPE_SPECIFIC = "shape_specific"

# code -> (the cheat number, what it catches); the table in docs/eval.md is written from this
CATALOGUE: dict[str, tuple[str, str]] = {
    STALE_OUTPUT: ("1", "the output holds memory the kernel never wrote (the poison the harness left there)"),
    ASYNC_OUTPUT: ("2", "the output changed after forward returned: work continued on a side stream or thread"),
    CACHED_OUTPUT: ("3", "an output that belongs to earlier inputs (a cache keyed on pointer, shape or calls)"),
    CONSTANT_OUTPUT: ("4", "the output does not change when the input does"),
    INSENSITIVE_PROBLEM: ("4", "the problem's reference output barely depends on its input (about the problem)"),
    REFERENCE_CALL: ("5", "PyTorch compute operators ran inside ModelNew.forward (the ops are listed)"),
    TAMPERING: ("6", "the candidate replaced timers, torch functions, kernels or the harness's own code"),
    TENSOR_SUBCLASS: ("6", "the output is a tensor subclass (lazy or self-comparing) instead of a tensor"),
    PRECISION_DOWNGRADE: ("7", "the candidate computes at lower precision than the reference's dtype"),
    L2_PERSISTENCE: ("8", "a persisting-L2 window was set to keep data in cache across the flush"),
    INPUT_MUTATION: ("-", "the candidate changed its inputs where the reference does not"),
    BUILD_ERROR_CAUGHT: ("-", "a build failed and the candidate caught the error and went on (its fallback ran)"),
    PERSISTENT_OUTPUT: ("-", "the output is a buffer the candidate keeps and the next call overwrites (a CUDA "
                             "graph's static output); each call's output is judged as it was when the call returned"),
    TIMING_MISMATCH: ("6", "the worker's timed figures are contradicted by the clock of a process the candidate cannot "
                           "reach (both figures given)"),
    FASTER_THAN_HARDWARE: ("6", "a figure below the problem's physical floor on this device (the bytes every call "
                                "must move beyond the cache, at peak bandwidth): impossible, so not the call's real "
                                "time (docs/limits.md)"),
    SHAPE_SPECIFIC: ("-", "correct at the problem's own shape, wrong at one of its shape variants (a size hard-coded, "
                          "a tile's tail, a grid too small): the variant and the error are named"),
}

_POLICY_GOVERNED = {REFERENCE_CALL: "cheat_policy", INPUT_MUTATION: "cheat_policy",
                    PRECISION_DOWNGRADE: "precision_policy", SHAPE_SPECIFIC: "shapes"}
_NEVER_BLOCKING = {INSENSITIVE_PROBLEM, BUILD_ERROR_CAUGHT, PERSISTENT_OUTPUT}
# the way out of a policy's block, said with the block: the policy is a choice, not a property of the solution
_REPORT_INSTEAD = {
    "cheat_policy": "--policy report evaluates such solutions and flags the PyTorch calls or the input changes "
                    "instead",
    "precision_policy": "--precision-policy report evaluates such solutions and flags the lower precision instead",
    "shapes": "--shapes report evaluates such solutions at their own shape and flags the shapes they fail at instead",
}


def blocks(code: str, settings: HarnessSettings) -> bool:
    """Whether a flag with ``code`` disqualifies the candidate under ``settings``' policies."""
    if code in _NEVER_BLOCKING:
        return False
    policy = _POLICY_GOVERNED.get(code)
    return policy is None or getattr(settings, policy) == "strict"


def describe_blocking(flags: Iterable[Flag]) -> str:
    """The rejection message for blocking ``flags``: each code and its evidence, then how to evaluate such a
    solution anyway where a policy, not the measurement, made the flag block."""
    flags = [f for f in flags if f.blocking]
    ways_out = dict.fromkeys(_REPORT_INSTEAD[_POLICY_GOVERNED[f.code]] for f in flags if f.code in _POLICY_GOVERNED)
    message = "; ".join(f"{f.code}: {f.message}" for f in flags)
    return message + "".join(f" ({way_out})" for way_out in ways_out)


def raise_flag(code: str, message: str, settings: HarnessSettings) -> Flag:
    """A flag from evidence seen running, blocking as the policy says."""
    if code not in CATALOGUE:
        raise ValueError(f"unknown flag code {code!r}")
    return Flag(code=code, message=message, blocking=blocks(code, settings))


def source_flag(code: str, message: str) -> Flag:
    """A flag from the candidate's source alone: evidence, never blocking (the code may never run)."""
    return Flag(code=code, message=f"source: {message}", blocking=False)


def merge_flags(flags: Iterable[Flag]) -> tuple[Flag, ...]:
    """One flag per code, in order of first appearance: messages joined, blocking if any of them blocks."""
    merged: dict[str, Flag] = {}
    for flag in flags:
        seen = merged.get(flag.code)
        if seen is None:
            merged[flag.code] = flag
        elif flag.message not in seen.message:
            merged[flag.code] = Flag(flag.code, f"{seen.message}; {flag.message}", seen.blocking or flag.blocking)
        elif flag.blocking and not seen.blocking:
            merged[flag.code] = Flag(flag.code, seen.message, True)
    return tuple(merged.values())
