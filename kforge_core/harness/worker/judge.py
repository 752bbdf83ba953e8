"""Judging shipped outputs against the expected ones. Runs in the referee (a worker that never imports candidate
code), or, for stage hooks run outside a harness, in the process that runs them.

Per shipped call: the files are read and their digests checked (``output_files``: a file changed after it was
written is tampering),
loaded as plain tensors only (``weights_only``), checked for type, count, nesting, device, shape and dtype, then
compared with the reference's outputs for the same seed. The inputs the candidate changed are compared with what
the reference leaves in its own. Across a candidate's calls: outputs cached from the previous trial, outputs that do
not change with the input, and the precision of the first trial against the float64 reference (computed then and
freed). Only the first and the last trial's outputs are kept, whatever the number of calls: where they were judged
(the device) for a problem small for the device, else in host memory. A call at one of the problem's shape
variants is judged against the reference's outputs there, and takes no part in the checks across calls; the
conclusion says how the candidate did at each variant (``shape_findings.py`` decides what that means, with the
worker's own failures there). The first timed call far from its answer is compared with the answers of the other
calls' inputs too: the conclusion names the inputs it answered, where it answered another call's.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Callable

import torch

from ...records import Failure, Flag, ShapeCheck, TrialError, VariantOutcome
from ...settings import HarnessSettings
from ...timing.timed_runs import pool_seeds
from ...values import tensor_leaves
from .. import flags as F
from ..protocol import Conclusion, Judged, Shipped
from .compare import Comparison, check_structure, compare_outputs, max_difference, same_bits
from .expected import Expected
from .output_files import OutputsPlace, UnreadableOutputs, read_outputs
from .precision import precision_report
from .reference import seeded_inputs
from .samples import sampled
from ..call_kinds import TIMED, TRACED, TRIAL, VARIANT


@dataclass
class _Session:
    """What was judged of one candidate so far."""

    trials: list[TrialError] = field(default_factory=list)
    failures: list[tuple[Failure, str]] = field(default_factory=list)  # the failed trials' classes and messages
    flags: list[Flag] = field(default_factory=list)
    notes: list[str] = field(default_factory=list)
    first: list[torch.Tensor] | None = None  # the first trial's outputs
    previous: tuple[list[torch.Tensor], int] | None = None  # the last trial's outputs and its seed
    change: float = 0.0  # how far any later trial's output is from the first's
    precision_bits: float | None = None
    timed_failures: list[str] = field(default_factory=list)
    timed_far: bool = False  # a timed call's output was far from its inputs' (not a near miss: ``near_miss``)
    timed_checked: int = 0
    # where the first far-off timed call's output is right for another call's inputs: which call, and whose inputs
    timed_answered_other: str = ""
    timed_other_looked: bool = False  # whether other calls' answers were compared with a failed timed call's
    labels: set[str] = field(default_factory=set)
    variants: dict[str, VariantOutcome] = field(default_factory=dict)  # each shape variant's call, as judged


class Judge:
    """Judges one candidate's shipped calls at a time (:meth:`begin` starts the next candidate's)."""

    def __init__(self, expected: Expected, settings: HarnessSettings,
                 hand_back: Callable[[], object] = lambda: None, *, for_device: bool = False,
                 keep_on_device: bool = False) -> None:
        """:param hand_back: hands the allocator's unused cache back to the device (around the float64 reference,
            whose blocks are twice the size of the float32 ones the cache holds, so neither would serve the other).
        :param for_device: the reference's device is not the host: large shipped outputs are put together in
            page-locked memory (``output_files.read_outputs``).
        :param keep_on_device: the first and the last trial's outputs are kept as they were judged, on the device
            (a problem small for it), not as read: each output read stays in host memory only while it is judged, so
            one page-locked block serves every call (a 4 GiB output's trials each needed a new block while two
            others were kept there, and making a block that large takes the host over a second)."""
        self.expected = expected
        self.settings = settings
        self.session = _Session()
        self.hand_back = hand_back
        self.for_device = for_device
        self.keep_on_device = keep_on_device
        self.place: OutputsPlace | None = None  # where the candidate's shipped outputs must lie

    def begin(self, anchor: Path | None = None, outputs: str = "") -> None:
        """A new candidate's calls from now on, shipped in ``anchor / outputs`` (read from there only, with no link
        followed); without ``anchor``, wherever the shipped paths say (a stage hook run outside a harness)."""
        self.session = _Session()
        self.place = OutputsPlace(anchor, outputs) if anchor is not None else None

    def judge(self, shipped: Shipped) -> Judged:
        session, settings = self.session, self.settings
        if shipped.label in session.labels:  # a second answer for the same call: not the harness's doing
            session.flags.append(F.raise_flag(F.TAMPERING, f"{shipped.label} was shipped twice", settings))
            return Judged(False, Failure.CHEAT, f"{shipped.label}: its outputs were shipped twice")
        session.labels.add(shipped.label)
        if shipped.kind == TRIAL and shipped.seed == self.expected.data.seed:  # the first trial, again: a new
            session.trials, session.failures = [], []  # initialisation of the candidate's parameters
            session.first, session.previous, session.change = None, None, 0.0
        loaded = self._load(shipped)
        if isinstance(loaded, Judged):
            return self._record(shipped, loaded)
        on_host, changed = loaded
        if shipped.kind == VARIANT:
            return self._record(shipped, self._at_variant(shipped, on_host))
        expected = self.expected.outputs(shipped.seed)  # first: its inputs are gone before the outputs come over
        if shipped.sample_seed is not None:  # a timed call: the elements the KForge process drew, drawn here too
            expected = sampled(expected, shipped.sample_seed, settings.timed_check_elements)
        device = self.expected.data.device
        outputs = [o.to(device, non_blocking=o.is_pinned()) if isinstance(o, torch.Tensor) else o for o in on_host]
        comparison = self._compared(outputs, expected, shipped.structure,
                                    "drawn elements of " if shipped.sample_seed is not None else "")
        judged = _judged(comparison)
        if shipped.kind == TIMED and not judged.passed and not near_miss(judged):
            self._answered_other(shipped, outputs)
        if changed:
            self._check_inputs(shipped, changed)
        first_passed = False
        if shipped.kind == TRIAL and comparison.failure is not Failure.OUTPUT_TYPE:
            first_passed = self._across_trials(shipped, on_host, outputs, expected, comparison)
        del outputs, expected
        if first_passed:  # with the device copies gone: the float64 reference takes twice a call's memory
            self._precision(shipped.seed, on_host)
        return self._record(shipped, judged)

    def conclude(self, kind: str) -> Conclusion:
        """What the calls judged so far add up to: after the trials (``verify``), or after timing."""
        session, settings = self.session, self.settings
        if kind != "verify":
            notes = (f"{session.timed_checked} timed calls checked",)
            failed = session.timed_failures
            which = (f"{failed[0]}" + (f" (and {len(failed) - 1} more of the {session.timed_checked} timed calls)"
                                       if len(failed) > 1 else "")) if failed else ""
            if failed and not session.timed_far:
                return Conclusion(notes=notes, failure=Failure.MISMATCH, message=(
                    f"{which} returned an output outside the tolerance on a few elements (at most "
                    f"{NEAR_MISS_SHARE:.0%} of those checked), though the trials passed: the output moves from "
                    "call to call by more than the tolerance allows (an algorithm chosen anew per call, "
                    "cudnn.benchmark, atomics)"))
            other = (f"; {session.timed_answered_other}, computed from another call's inputs (kept across calls, "
                     "or read from where an earlier call's input lay: a CUDA graph that captured the copy of its "
                     "input reads the first call's address at every replay)") if session.timed_answered_other else ""
            flags = [] if not failed else [F.raise_flag(F.CACHED_OUTPUT, (
                f"{which} returned an output that is wrong for its inputs: the outputs while timing are not "
                "computed from the current inputs (a cache across calls, or an answer only for the calls it expects "
                f"to be checked){other}"), settings)]
            # the KForge process counts what reached the referee against the timed calls it saw (host/timed_checks)
            return Conclusion(flags=F.merge_flags(flags), notes=notes)
        flags = list(session.flags)
        if self.expected.insensitive:
            flags.append(F.raise_flag(F.INSENSITIVE_PROBLEM, (
                f"the reference's output changes by at most {self.expected.sensitivity:.3g} between trials, within "
                "tolerance: a constant output would pass this problem's correctness check"), settings))
        if len(session.trials) > 1 and self.expected.sensitivity > 0 \
                and session.change <= 0.01 * self.expected.sensitivity:
            flags.append(F.raise_flag(F.CONSTANT_OUTPUT, (
                f"the output changes by at most {session.change:.3g} across trials with different inputs, where the "
                f"reference's changes by {self.expected.sensitivity:.3g}: it does not depend on the input"), settings))
        failure, message = session.failures[0] if session.failures else (None, "")
        # what the shape variants decide is decided where the worker's own failures there are known too
        return Conclusion(tuple(session.trials), F.merge_flags(flags),
                          (*self.expected.tolerance_notes, *session.notes), failure, message, session.precision_bits,
                          self._shape_check())

    # ------------------------------------------------------------------------------------------ inside

    def _load(self, shipped: Shipped) -> tuple[list[Any], dict[str, torch.Tensor]] | Judged:
        """The shipped outputs as read (on the host) and the changed inputs; or the judgement on files that are not
        what the worker wrote."""
        try:
            outputs, changed = read_outputs(shipped.paths, shipped.digests, for_device=self.for_device,
                                            place=self.place)
        except UnreadableOutputs as exc:
            if exc.changed:
                self.session.flags.append(F.raise_flag(F.TAMPERING, (
                    f"the outputs of {shipped.label}: {exc.evidence}" if exc.evidence else
                    f"the outputs of {shipped.label} were changed after the harness wrote them"), self.settings))
            return Judged(False, Failure.CHEAT, f"{shipped.label}: {exc}")
        return outputs, changed

    def _at_variant(self, shipped: Shipped, on_host: list[Any]) -> Judged:
        """A call at one of the problem's shape variants, against the reference's outputs there; a variant the
        reference cannot run at is not judged (its reason is the outcome)."""
        answers = self.expected.variants
        trial = answers.trials.get(shipped.variant)
        if trial is None or shipped.seed != trial.seed:
            what = "a shape variant the problem does not have" if trial is None else "inputs of another seed"
            self.session.flags.append(F.raise_flag(F.TAMPERING, f"{shipped.label} was shipped for {what}",
                                                   self.settings))
            return Judged(False, Failure.CHEAT, f"{shipped.label}: shipped for {what}")
        if shipped.variant in answers.dropped:
            return Judged(True, None, f"not judged: {answers.dropped[shipped.variant]}")
        expected = answers.outputs(shipped.variant)
        device = self.expected.data.device
        outputs = [o.to(device) if isinstance(o, torch.Tensor) else o for o in on_host]
        return _judged(self._compared(outputs, expected, shipped.structure))

    def _shape_check(self) -> ShapeCheck | None:
        """How the candidate did at each of the problem's shape variants (None: none are checked)."""
        plan = self.expected.data.problem.shapes
        if self.settings.shapes == "off" or not plan.variants:
            return None
        dropped, judged = self.expected.variants.dropped, self.session.variants
        outcomes = tuple(VariantOutcome(v.name, "dropped", message=dropped[v.name]) if v.name in dropped
                         else judged.get(v.name, VariantOutcome(v.name, "not_run")) for v in plan.variants)
        return ShapeCheck(self.settings.shapes, plan, outcomes)

    def _record(self, shipped: Shipped, judged: Judged) -> Judged:
        session = self.session
        if shipped.kind == TRIAL:
            session.trials.append(TrialError(shipped.seed, judged.passed, judged.max_abs_error,
                                             judged.max_rel_error, judged.message))
            if not judged.passed:
                session.failures.append((judged.failure or Failure.MISMATCH,
                                         f"trial seed {shipped.seed}: {judged.message}"))
        elif shipped.kind == TRACED:
            if not judged.passed:
                session.flags.append(F.raise_flag(F.TAMPERING, (
                    f"forward answered wrongly while its operators were traced ({judged.message})"), self.settings))
        elif shipped.kind == TIMED:
            session.timed_checked += 1
            if not judged.passed:
                session.timed_failures.append(f"{shipped.label} ({judged.message})")
                session.timed_far = session.timed_far or not near_miss(judged)
        elif shipped.kind == VARIANT and shipped.variant not in self.expected.variants.dropped:
            session.variants[shipped.variant] = VariantOutcome(
                shipped.variant, "held" if judged.passed else "failed",
                None if judged.passed else judged.failure or Failure.MISMATCH, judged.message)
        return judged

    def _across_trials(self, shipped: Shipped, on_host: list[Any], outputs: list[torch.Tensor],
                       expected: list[torch.Tensor], comparison: Comparison) -> bool:
        """Cached outputs (exactly the previous trial's, where the reference's differ) and how far outputs move
        from the first trial's. What is kept is what was already made: the outputs as read, on the host; the
        previous trial's expected outputs are asked for again only when a trial fails. Differences are taken on the
        reference's device. True when this was the first trial and it passed: its precision is estimated next."""
        session = self.session
        mine = list(outputs if self.keep_on_device else on_host)
        if session.previous is not None and not comparison.passed \
                and max_difference(outputs, session.previous[0]) == 0 \
                and max_difference(expected, self.expected.outputs(session.previous[1])) > 0:
            session.flags.append(F.raise_flag(F.CACHED_OUTPUT, (
                f"trial seed {shipped.seed} returned exactly the previous trial's output although its inputs "
                "differ: the output is cached across calls"), self.settings))
        session.previous = (mine, shipped.seed)
        if session.first is None:
            session.first = mine
            return comparison.passed  # a wrong answer says nothing about precision
        session.change = max(session.change, max_difference(outputs, session.first))
        return False

    def _precision(self, seed: int, on_host: list[Any]) -> None:
        """The first trial's precision against the reference in float64 (computed, then the reference's own
        outputs again, then freed); the candidate's outputs come to the device a piece at a time."""
        session = self.session
        self.hand_back()
        exact, note = self.expected.float64_outputs(seed, self.hand_back)
        expected = self.expected.outputs(seed) if exact is not None else []
        report = precision_report(on_host, expected, exact, note, self.expected.structure, self.settings)
        del exact, expected
        self.hand_back()
        session.notes.extend(report.notes)
        session.flags.extend(report.flags)
        session.precision_bits = report.bits

    def _answered_other(self, shipped: Shipped, outputs: list[Any]) -> None:
        """For the first timed call whose output is far from its inputs' answer: whether it is the answer for
        another call's inputs instead (a timing input set's, then a trial's), compared at the same drawn elements.
        Not on a problem whose output hardly depends on its inputs (any answer would do); where an answer is
        :data:`OTHER_ANSWERS_MADE_BELOW` bytes or more, only against the answers already kept (each other one would
        be a call of the reference, and its output on the device, for a diagnosis)."""
        session = self.session
        if session.timed_other_looked or self.expected.insensitive:
            return
        session.timed_other_looked = True
        trials = [t.seed for t in self.expected.data.trials]
        others = [(seed, f"timing input set seed {seed}") for seed in pool_seeds(self.settings)]
        others += [(seed, f"trial seed {seed}") for seed in trials]
        made_now = sum(self.expected.data.output_bytes) < OTHER_ANSWERS_MADE_BELOW
        for seed, whose in others:
            if seed == shipped.seed or not (made_now or seed in self.expected.kept):
                continue
            answer = self.expected.outputs(seed)
            if shipped.sample_seed is not None:
                answer = sampled(answer, shipped.sample_seed, self.settings.timed_check_elements)
            if self._compared(outputs, answer, shipped.structure).passed:
                session.timed_answered_other = f"{shipped.label}'s output is the answer for the inputs of {whose}"
                return

    def _compared(self, outputs: list[Any], expected: list[torch.Tensor], structure: tuple[Any, ...] | None,
                  what: str = "") -> Comparison:
        """``outputs``, nested as ``structure``, against ``expected``: their nesting and kind first (before any
        tensor operation touches them), then their values within the problem's tolerances."""
        return check_structure(outputs, expected, structure=structure, reference_structure=self.expected.structure,
                               what=what) or compare_outputs(outputs, expected, self.expected.tolerances, structure)

    def _check_inputs(self, shipped: Shipped, changed: dict[str, torch.Tensor]) -> None:
        """The inputs the candidate changed, against what the reference leaves in its own copy."""
        pristine = dict(tensor_leaves(seeded_inputs(self.expected.data.module, shipped.seed,
                                                    self.expected.data.device)))
        _, after = self.expected.call(shipped.seed)
        by_reference = dict(tensor_leaves(after))
        expected_changes = [p for p, t in by_reference.items() if p in pristine and not same_bits(t, pristine[p])]
        unexpected = [p for p, t in changed.items()
                      if p not in by_reference or not same_bits(t.to(by_reference[p].device), by_reference[p])]
        if unexpected:
            self.session.flags.append(F.raise_flag(F.INPUT_MUTATION, (
                f"forward changed input(s) {', '.join(unexpected)} in place"
                + ("" if not expected_changes else f" (the reference changes {', '.join(expected_changes)}, "
                                                   "differently)")), self.settings))


def _judged(comparison: Comparison) -> Judged:
    return Judged(comparison.passed, comparison.failure, comparison.message, comparison.max_abs_error,
                  comparison.max_rel_error, comparison.outside_share)


# Another call's answer is made anew, to see whether a timed call answered for that call's inputs, only while an
# answer is smaller than this; larger ones are compared only where they are kept
OTHER_ANSWERS_MADE_BELOW = 256 << 20

# A timed call whose output is outside tolerance on at most this share of the checked elements, all of them finite,
# is a near miss: an output cached from other inputs, or made up for calls not expected to be checked, is wrong
# nearly everywhere. A near miss fails the candidate as a numerical mismatch, not as a cheat.
NEAR_MISS_SHARE = 0.01


def near_miss(judged: Judged) -> bool:
    """Whether a failed call's output was only just wrong: a numerical mismatch (no NaN, Inf, shape or type
    failure) on at most :data:`NEAR_MISS_SHARE` of the compared elements."""
    return judged.failure is Failure.MISMATCH and judged.outside_share <= NEAR_MISS_SHARE
