"""What a candidate's outcomes at the shape variants decide, in one place for the referee, the candidate's worker and
the KForge process: the ``shape_specific`` flag naming each variant it failed at and the error there, blocking
under ``harness.shapes = strict`` (then the candidate's failure is the first variant's, its message naming the
variant) and only reported under ``report``. A variant the reference itself cannot run at is ``dropped``, never
failed."""

from __future__ import annotations

from dataclasses import replace

from . import flags as F
from ..records import Failure, Flag, ShapeCheck, VariantOutcome
from ..settings import HarnessSettings


def shape_findings(check: ShapeCheck | None, settings: HarnessSettings) -> tuple[Flag | None, Failure | None, str]:
    """The flag the failed variants raise (None: none failed), and under ``strict`` the failure and its message
    (None and "" otherwise)."""
    failed = check.failed if check is not None else ()
    if not failed:
        return None, None, ""
    assert check is not None
    said = [f"at {_named(check, outcome)}: {outcome.message}" for outcome in failed]
    flag = F.raise_flag(F.SHAPE_SPECIFIC, "correct at the problem's own shape, wrong " + "; wrong ".join(said),
                        settings)
    if not flag.blocking:
        return flag, None, ""
    first = failed[0]
    more = f" (and wrong at {len(failed) - 1} more variant(s))" if len(failed) > 1 else ""
    return flag, first.failure, f"shape_specific: wrong at shape variant {_named(check, first)}{more}: {first.message}"


def with_shape_flag(flags: list[Flag] | tuple[Flag, ...], check: ShapeCheck | None,
                    settings: HarnessSettings) -> list[Flag]:
    """``flags`` with the ``shape_specific`` flag of ``check`` in place of any other (one flag, from one check)."""
    flag, _, _ = shape_findings(check, settings)
    kept = [f for f in flags if f.code != F.SHAPE_SPECIFIC]
    return kept + ([flag] if flag is not None else [])


def merged_check(referee: ShapeCheck | None, worker: ShapeCheck | None) -> ShapeCheck | None:
    """The referee's check, where a variant it never saw is the worker's failure there (the candidate raised, or
    returned something no referee can judge): the worker can make its verdict worse, never better."""
    if referee is None:
        return None
    claims = {o.variant: o for o in (worker.outcomes if worker is not None else ()) if o.status == "failed"}
    outcomes = tuple(claims.get(o.variant, o) if o.status == "not_run" else o for o in referee.outcomes)
    return replace(referee, outcomes=outcomes)


def unjudged(check: ShapeCheck | None) -> tuple[VariantOutcome, ...]:
    """The variants no call reached the referee for (a candidate that passed its trials runs every one)."""
    return tuple(o for o in check.outcomes if o.status == "not_run") if check is not None else ()


def _named(check: ShapeCheck, outcome: VariantOutcome) -> str:
    try:
        return check.plan.variant(outcome.variant).describe()
    except KeyError:
        return outcome.variant


def held_words(check: ShapeCheck | None) -> str:
    """What a passing verdict's message adds: ``, held at 3 shape variants (1 dropped: ...)`` ("" for none)."""
    if check is None:
        return ""
    held = sum(o.status == "held" for o in check.outcomes)
    dropped = [o for o in check.outcomes if o.status == "dropped"]
    said = f", held at {held} of {len(check.outcomes) - len(dropped)} shape variants" if held else ""
    if dropped:
        said += f" ({len(dropped)} dropped: the reference itself fails there)"
    return said
