"""One harness across problems (warm workers take the next problem), the baseline cache, and binding workers to
one unit of a device."""

from __future__ import annotations

import dataclasses
import json

import pytest

from kforge_core.device import Device
from kforge_core.errors import KForgeError
from kforge_core.harness import Harness
from kforge_core.harness.host.device_binding import device_environment

from .helpers import SELECTION, TORCH_CPU, candidate, problem, settings_for
from .torch_backend_plugin import TORCH_CPU_ACCELERATOR, TORCH_CPU_UNITS


def _harness(cache_dir, backend=TORCH_CPU, **changes) -> Harness:
    settings = settings_for(cache_dir, **{"spare_workers": 0, **changes})
    return Harness(backend=backend, problem=problem("relu_scale"), settings=settings, plugins=SELECTION)


def test_a_warm_worker_takes_the_next_problem_and_the_host_cpus_baselines_are_measured_every_time(fresh_cache):
    cache = fresh_cache
    with _harness(cache) as harness:
        first = harness.evaluate(candidate("relu_scale_numpy"))
        harness.use_problem(problem("linear_relu"))
        second = harness.evaluate(candidate("linear_relu_numpy"))
        harness.use_problem(problem("relu_scale"))
        third = harness.evaluate(candidate("relu_scale_numpy"))
        started = harness.workers_started
    assert [v.correct for v in (first, second, third)] == [True, True, True], [second.message, third.message]
    assert [v.problem for v in (first, second, third)] == ["relu_scale", "linear_relu", "relu_scale"]
    assert not any(v.worker_replaced for v in (first, second, third))
    assert started == 2  # one worker served all three candidates, and the referee judged them (the
    # baseline worker is not one of the pool's)
    # the host CPU's figure is the fastest run (Device.headline_statistic), the candidate's and the baseline's alike
    ((name, eager),) = first.baselines
    assert first.method.statistic == first.runtime.statistic == eager.statistic == "min"
    assert first.speedups == ((name, eager.min / first.runtime.min),) and first.runtime_ms == first.runtime.min
    assert second.baselines[0][1].median != first.baselines[0][1].median
    # a shared host's load moves a figure past any band: no prior, here or in the cache (Device.prior_band)
    assert [(s.origin, s.prior) for v in (first, second, third) for s in v.baseline_sources] == [("measured", "")] * 3
    assert not (cache / "baselines").exists()


@pytest.mark.slow
def test_on_an_accelerator_the_baseline_cache_is_a_prior_next_time(tmp_path):
    cache = tmp_path / "cache"
    with _harness(cache, backend=TORCH_CPU_ACCELERATOR) as harness:
        first = harness.evaluate(candidate("relu_scale_numpy"))
    with _harness(cache, backend=TORCH_CPU_ACCELERATOR) as harness:
        again = harness.evaluate(candidate("relu_scale_numpy"))
    assert [s.origin for s in first.baseline_sources] == ["measured"]
    (source,) = again.baseline_sources
    assert source.prior == "the baseline cache" and source.origin in ("confirmed", "remeasured")
    assert (again.baselines == first.baselines) == (source.origin == "confirmed")
    assert source.checked_at >= source.measured_at if source.origin == "confirmed" else source.checked_at > 0
    assert "the baseline cache" in dict(again.baseline_notes)["eager"]
    # in KForge's own state directory, beside the cache directory (which workers write), not in it
    assert not (cache / "baselines").exists()
    kept = list((tmp_path / "cache-state" / "baselines").glob("*.json"))
    assert len(kept) == 1 and "eager" in json.loads(kept[0].read_text())["payload"]["baselines"]

    with _harness(cache, backend=TORCH_CPU_ACCELERATOR, baseline_cache="refresh") as fresh:
        verdict = fresh.evaluate(candidate("relu_scale_numpy"))
        assert [s.origin for s in verdict.baseline_sources] == ["measured"]


def test_a_worker_that_failed_is_not_reused_for_the_next_problem(fresh_cache):
    with _harness(fresh_cache, baselines=()) as harness:
        failed = harness.evaluate(candidate("mismatch"), measure=False)
        harness.use_problem(problem("linear_relu"))
        verdict = harness.evaluate(candidate("linear_relu_numpy"), measure=False)
        assert failed.worker_replaced and verdict.correct, verdict.message
        assert harness.workers_started == 3  # the failed one, its replacement, and the referee


def test_workers_are_bound_to_the_unit_they_are_given(fresh_cache):
    settings = settings_for(fresh_cache, spare_workers=0, baselines=())
    with Harness(backend=TORCH_CPU_UNITS, problem=problem("relu_scale"), settings=settings, plugins=SELECTION,
                 device_index=1) as harness:
        verdict = harness.evaluate(candidate("env_report"), measure=False)
    assert verdict.correct, verdict.message
    assert "UNIT=1" in verdict.stdout
    assert "RUNTIME=set-by-the-device" in verdict.stdout  # the device's runtime_environment


def test_device_environment_counts_among_the_units_already_shown():
    runtime = ("TORCH_TEST_RUNTIME", "set-by-the-device")
    assert device_environment(TORCH_CPU_UNITS, None, {}) == (runtime,)
    assert device_environment(TORCH_CPU_UNITS, None, {"TORCH_TEST_RUNTIME": "mine"}) == ()  # the user's value stays
    assert device_environment(TORCH_CPU_UNITS, 1, {}) == (runtime, ("TORCH_TEST_UNITS", "1"))
    assert device_environment(TORCH_CPU_UNITS, 1, {"TORCH_TEST_UNITS": "4,6"}) == (runtime, ("TORCH_TEST_UNITS", "6"))
    with pytest.raises(KForgeError, match="out of range"):
        device_environment(TORCH_CPU_UNITS, 2, {"TORCH_TEST_UNITS": "4,6"})
    assert device_environment(TORCH_CPU, 1, {}) == ()  # the host CPU: a slot, nothing to bind

    class UnboundDevice(Device):
        torch_type = "xpu"

    gpu = dataclasses.replace(TORCH_CPU, name="no-selector", device="xpu", device_class=UnboundDevice)
    with pytest.raises(KForgeError, match="names no visible_devices_env"):
        device_environment(gpu, 0, {})
