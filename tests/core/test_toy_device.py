"""A device type the core has never heard of, from a separately packaged plugin (``kforge_toydevice``): candidates
are evaluated end to end on it (a correct one, a wrong one, a fault of its runtime, a cheat, one that names the
device's cache-pinning call, one that patches the device's runtime), every device-specific step goes through its own
Device, and the plugin's own static-check pattern and device namespace join the cheat checks."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

pytestmark = pytest.mark.slow  # one `kforge eval` of six candidates, shared by the module

HARNESS = Path(__file__).resolve().parents[1] / "harness"
FAULT = '''
import torch


class ModelNew(torch.nn.Module):
    def __init__(self, scale):
        super().__init__()

    def forward(self, x):
        raise RuntimeError("toy runtime: toy queue lost while running kernel relu_scale")
'''
# Correct, and calls the toy runtime's cache pinning: the plugin's static-check pattern finds it in the source.
PINS = '''
import numpy as np
import torch
import kforge_toydevice.runtime as toy


class ModelNew(torch.nn.Module):
    def __init__(self, scale):
        super().__init__()
        self.scale = scale
        toy.pin_cache(1 << 20)

    def forward(self, x):
        return torch.from_numpy(np.maximum(x.numpy(), 0) * np.float32(self.scale))
'''
# Correct, but replaces a function of the toy runtime: the plugin's device namespace makes it tampering.
PATCHES = PINS.replace("toy.pin_cache(1 << 20)", "toy.drain = lambda: None")


@pytest.fixture(scope="module")
def toy_eval(plugin_site, tmp_path_factory):
    """One ``kforge eval`` of six candidates on the toy backend, and the trace of the device's methods."""
    from .conftest import kforge_command

    work = tmp_path_factory.mktemp("toy")
    for name, text in (("fault", FAULT), ("pins", PINS), ("patches", PATCHES)):
        (work / f"{name}.py").write_text(text)
    trace = work / "trace.txt"
    candidates = [str(HARNESS / "candidates" / f"{name}.py") for name in ("relu_scale_numpy", "mismatch")]
    candidates += [str(work / "fault.py"), str(HARNESS / "candidates" / "stale_output.py")]
    candidates += [str(work / "pins.py"), str(work / "patches.py")]
    result = kforge_command(plugin_site, work, "eval", str(HARNESS / "problems" / "relu_scale.py"), *candidates,
                            "--backend", "toy", "--json", "--trials", "2", "--warmup", "1", "--repetitions", "3",
                            "--baselines", "eager",
                            # the device's trace is written from inside the workers into this test's directory,
                            # which the sandbox would hide from them
                            "--sandbox", "off", plugins="toydevice",
                            # every timer whatever a call takes on a busy machine (harness.beside_timers)
                            env={"TOYDEVICE_TRACE": str(trace), "KFORGE_HARNESS__BESIDE_TIMERS": "all",
                                 "KFORGE_HARNESS__SPARE_WORKERS": "0"})  # no spare: a worker starts when needed
    assert result.stdout.startswith("["), result.stderr
    return result, json.loads(result.stdout), trace.read_text().split()


def test_candidates_are_evaluated_end_to_end_on_a_device_of_its_own(toy_eval):
    result, (good, wrong, fault, cheat, _, _), _ = toy_eval
    assert result.returncode == 3, result.stderr  # some candidate is incorrect
    assert good["correct"] is True, good["message"]
    assert good["runtime"]["count"] == 3 and good["speedups"]["eager"] > 0
    assert wrong["failure"] == "numerical_mismatch"
    assert fault["failure"] == "device_fault" and fault["worker_replaced"] is True  # the toy runtime's own words
    assert cheat["correct"] is False
    assert {f["code"]: f["blocking"] for f in cheat["flags"]}["stale_output"] is True  # the toy poison showed


def test_the_speed_of_light_comes_from_the_toy_devices_stated_peaks(toy_eval):
    _, (good, *_), _ = toy_eval
    bound = good["speed_of_light"]["bound"]
    assert bound["device"] == "Toy Accelerator T1" and bound["bandwidth"] == 1e12
    assert bound["bandwidth_source"] == "the Toy Accelerator T1 datasheet"
    assert bound["sol_ms"] == pytest.approx(bound["bytes"] / 1e12 * 1e3)  # elementwise work: memory binds
    assert 0 < good["sol_fraction"] <= 1 and "faster_than_hardware" not in {f["code"] for f in good["flags"]}


def test_every_device_specific_step_went_through_the_toy_device(toy_eval):
    _, (good, *_), called = toy_eval
    method = good["method"]
    assert method["device"] == "toy"
    assert method["synchronize"].startswith("the toy queue drained")
    assert method["timer"].startswith("the toy clock")
    assert method["l2_flush_bytes"] == 2 << 20  # twice the toy cache
    assert {"synchronize", "flush", "poison", "event", "device_clock"} <= set(called)


def test_the_plugins_own_pattern_and_namespace_join_the_cheat_checks(toy_eval):
    _, (*_, pins, patches), _ = toy_eval
    pinning = {f["code"]: f for f in pins["flags"]}["toy_cache_pinning"]
    assert pins["correct"] is True and pinning["blocking"] is False, pins["message"]
    assert pinning["message"] == "source: pins.py names the toy cache-pinning call"
    assert patches["correct"] is False
    tampering = {f["code"]: f for f in patches["flags"]}["tampering"]
    assert tampering["blocking"] is True and "kforge_toydevice.runtime.drain" in tampering["message"]


def test_every_timer_the_toy_device_offers_is_measured_and_named(toy_eval):
    _, (good, *_), _ = toy_eval
    assert good["timer"] == "wall" and good["method"]["headline"] == "wall"
    assert [name for name, _ in good["method"]["timers"]] == ["wall", "events", "device"]
    assert dict(good["method"]["timers"])["device"].startswith("the toy device's busy time")
    for figures in (good["figures"], good["baseline_figures"]["eager"]):
        assert set(figures) == {"wall", "events", "device"} and all(f["count"] == 3 for f in figures.values())
    assert set(good["speedups_by_timer"]) == {"wall", "events", "device"}
    assert good["speedups"]["eager"] == good["speedups_by_timer"]["wall"]["eager"]
    assert [s["baseline"] for s in good["baseline_sources"]] == ["eager"]


def _reply(agent: str, text: str) -> str:
    return json.dumps({"agent": agent, "reply": text, "usage": {"input_tokens": 100, "output_tokens": 50}})


def test_the_agent_loop_and_a_bench_run_on_the_toy_device(plugin_site, tmp_path):
    """The device plugin alone (its Device, its lowering) carries ``kforge run`` with a scripted model and ``kforge
    bench`` of a suite end to end: nothing of the core knows the toy device."""
    from .conftest import kforge_command

    solution = (HARNESS / "candidates" / "relu_scale_numpy.py").read_text()
    script = tmp_path / "script.jsonl"
    script.write_text("\n".join([
        _reply("generation", f"A NumPy kernel:\n\n```python\n{solution}```\n"),
        _reply("analysis", "Two passes over x: fuse the maximum and the scale into one."),
        _reply("generation", "One pass:\n\n```python\n" + solution.replace(
            "np.maximum(x.numpy(), 0) * np.float32(self.scale)",
            "np.multiply(np.maximum(x.numpy(), 0), np.float32(self.scale))") + "```\n"),
    ]) + "\n")
    # few runs, no spare worker, and the sandbox off as in the eval above; the headline timer alone: the eval above
    # checks the toy's busy clock: the calling thread's CPU time, its time in the kernel included, which on a loaded
    # host once came out 1.2 ms above the events' calls, past the hidden-work floor (async_output for honest code)
    (tmp_path / "kforge.toml").write_text(
        '[harness]\ntrials = 2\nwarmup = 1\nrepetitions = 3\nbaselines = ["eager"]\nspare_workers = 0\n'
        'sandbox = "off"\nbeside_timers = "headline"\n')
    run = kforge_command(plugin_site, tmp_path, "run", str(HARNESS / "problems" / "relu_scale.py"), "--backend", "toy",
                         "--llm", f"replay:{script}", "--functional-attempts", "1", "--optimization-rounds", "1",
                         "--runs-dir", "runs", plugins="toydevice")
    assert run.returncode == 0, run.stderr + run.stdout
    assert "functional f1: correct" in run.stdout and "optimization o1.1: correct" in run.stdout, run.stdout
    assert "Best:" in run.stdout and "Toy Accelerator T1" in run.stdout  # its speed of light, from its datasheet
    suite, solutions = tmp_path / "suite", tmp_path / "solutions"
    suite.mkdir(), solutions.mkdir()
    (suite / "relu_scale.py").write_text((HARNESS / "problems" / "relu_scale.py").read_text())
    (solutions / "relu_scale.py").write_text(solution)
    bench = kforge_command(plugin_site, tmp_path, "bench", str(suite), "--backend", "toy", "--solutions",
                           str(solutions), "--runs-dir", "runs", "--json", plugins="toydevice")
    assert bench.returncode == 0, bench.stderr
    summary = json.loads(bench.stdout)["summary"]
    assert summary["correct"] == 1 and summary["backend"] == "toy" and summary["geomean_speedup"]["eager"] > 0
