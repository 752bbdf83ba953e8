"""The physical floor, judged in the KForge process from a verdict's figures and a device's stated peaks: a figure
below it is ``faster_than_hardware`` (blocking: the verdict is a cheat), naming the floor, the peaks and the figure;
a figure above it, or a problem whose output hardly depends on its input, is not flagged; the verdict then carries
its place against the bound."""

from __future__ import annotations

import dataclasses

import pytest

from kforge_core.harness import flags as F
from kforge_core.harness.host.evaluation import StageOutcomes
from kforge_core.harness.host.verdict_parts import decide
from kforge_core.harness.host.speed_of_light import floor_flags, with_speed_of_light
from kforge_core.harness.protocol import TimingOutcome
from kforge_core.harness.verdict import RuntimeStats, TimingMethod, Verdict
from kforge_core.peaks import Peak, peaks_of
from kforge_core.precision_contract import contract_named
from kforge_core.records import CompileResult, Failure, Flag, VerifyResult
from kforge_core.settings import HarnessSettings
from kforge_core.speed_of_light import sol_bound
from kforge_core.work_count import WorkCount

MIB = 1 << 20
# the toy device's datasheet: 1 TB/s, a 1 MiB cache flushed before every timed run
TOY = peaks_of("Toy Accelerator T1", Peak(1e12, "the Toy Accelerator T1 datasheet"), {}, cache_bytes=MIB)
# 64 MiB in, 64 MiB out: every call reads 64 MiB and writes 63 MiB beyond the cache, 0.1332 ms at 1 TB/s
BOUND = sol_bound(128 * MIB, 64 * MIB, 64 * MIB, WorkCount(), TOY, contract_named("fp32"), flushes_caches=True)
FLOOR_MS = 127 * MIB / 1e12 * 1e3
METHOD = TimingMethod("toy", 1, 3, 2 * MIB, "sync", "timer", True, headline="events")


def timed(*samples_ms: float, flags: tuple[Flag, ...] = ()) -> StageOutcomes:
    out = StageOutcomes(compile=CompileResult(ok=True), verify=VerifyResult(correct=True))
    out.timing = TimingOutcome(samples_ms, METHOD)
    out.flags.extend(flags)
    return out


def test_the_floor_is_what_the_inputs_and_the_outputs_beyond_the_cache_take():
    assert BOUND.floor_ms == pytest.approx(FLOOR_MS)
    assert BOUND.flag_threshold_ms == pytest.approx(FLOOR_MS * 0.9 - 0.002)


def test_a_figure_below_the_floor_is_faster_than_hardware_and_blocks():
    out = timed(0.01, 0.012, 0.011)  # median 0.011 ms: a tenth of what moving its bytes takes
    flags = floor_flags(out, BOUND, HarnessSettings())
    assert [f.code for f in flags] == [F.FASTER_THAN_HARDWARE] and flags[0].blocking
    message = flags[0].message
    assert "the events figure 0.011 ms" in message and "Toy Accelerator T1" in message
    assert "133,169,152 bytes" in message and "1,000 GB/s (the Toy Accelerator T1 datasheet)" in message
    out.flags.extend(flags)
    _, failure, text = decide(out, ())
    assert failure is Failure.CHEAT and text.startswith("rejected: faster_than_hardware")


def test_a_figure_within_the_slack_or_above_the_floor_is_not_flagged():
    assert floor_flags(timed(FLOOR_MS * 0.95), BOUND, HarnessSettings()) == []
    assert floor_flags(timed(FLOOR_MS * 3), BOUND, HarnessSettings()) == []
    assert floor_flags(timed(FLOOR_MS * 0.5), None, HarnessSettings()) == []  # no bound: nothing to judge by


def test_a_problem_whose_output_ignores_its_input_has_no_floor():
    insensitive = Flag(F.INSENSITIVE_PROBLEM, "the output barely changes", False)
    assert floor_flags(timed(0.001, flags=(insensitive,)), BOUND, HarnessSettings()) == []


def test_the_verdict_is_placed_against_the_bound():
    verdict = Verdict(
        candidate="c", candidate_digest="d", backend="toy", problem="p", compile=CompileResult(ok=True),
        verify=VerifyResult(correct=True), runtime=RuntimeStats(0.5, 0.5, 0.0, 0.5, 3),
        baselines=(("eager", RuntimeStats(1.0, 1.0, 0.0, 1.0, 3)),), speedups=(("eager", 2.0),), flags=(),
        failure=None, message="", method=METHOD, profile=None, stdout="", stderr="", worker_replaced=False)
    placed = with_speed_of_light(verdict, BOUND).speed_of_light
    assert placed.timer == "events" and placed.figure_ms == 0.5
    assert placed.fraction == pytest.approx(BOUND.sol_ms / 0.5)
    assert dict(placed.baseline_fractions)["eager"] == pytest.approx(BOUND.sol_ms / 1.0)
    assert placed.score == pytest.approx(1 / (1 + (0.5 - BOUND.sol_ms) / (1.0 - BOUND.sol_ms)))
    failed = dataclasses.replace(verdict, runtime=None, failure=Failure.CHEAT)
    assert with_speed_of_light(failed, BOUND).speed_of_light.fraction is None
    assert with_speed_of_light(verdict, None).speed_of_light is None
