"""On an Intel GPU with PyTorch's XPU build and pytorch-triton-xpu: ``make xpu-test`` (``pytest -m xpu
plugins/kforge_xpu``). The device layer against the real torch.xpu, the lowering with the device's facts, and the
example and the test candidates through KForge's harness on the XPU, with the profile summarised. None of this
has run yet: no Intel GPU was available where the backend was written."""

from __future__ import annotations

import pytest
import torch

from kforge_core.registry import BackendRegistry
from kforge_core.plugins import PluginSelection, build_plugin_manager
from kforge_core.problem import load_problem
from kforge_core.records import Candidate, Failure
from kforge_core.settings import HarnessSettings, Settings

from xpu_testing import CANDIDATES, EXAMPLE

pytestmark = pytest.mark.xpu
PLUGINS = PluginSelection(only=("xpu",))


@pytest.fixture(scope="module")
def device():
    if not (hasattr(torch, "xpu") and torch.xpu.is_available()):
        pytest.skip("no Intel GPU visible to torch.xpu")
    from kforge_core.devices import make_device
    from kforge_xpu.backend import XPU

    device = make_device(XPU)
    device.start()
    return device


def test_the_backend_is_available_here(device):
    answer = BackendRegistry(build_plugin_manager(PLUGINS)).availability("xpu")
    assert answer.available, answer.reason
    assert "Xe-cores" in answer.detail


def test_the_device_layer_on_the_real_device(device):
    facts = device.vendor.xpu_facts()
    assert facts.xe_cores > 0 and facts.eu_count >= facts.xe_cores and facts.sub_group_sizes
    assert device.cache_bytes == facts.cache_bytes and device.flush_bytes > 0
    a = torch.randn(2048, 2048, device="xpu")
    span = device.start_events()
    a @ a
    span.stop()
    device.synchronize()
    assert span.elapsed_ms() > 0
    device.flush_caches()
    stats = device.memory()
    assert stats.allocated >= a.numel() * 4 and stats.total == facts.memory_bytes
    assert device.vendor.free_memory()[0] > 0 and device.vendor.peak_allocated() >= stats.allocated
    size = 1 << 20
    freed = torch.empty(size, dtype=torch.uint8, device="xpu")
    del freed
    assert size in device.vendor.free_block_sizes()  # the caching allocator's snapshot has the block, free
    device.poison([size])
    again = torch.empty(size // 4, dtype=torch.float32, device="xpu")
    assert device.poisoned_fraction(again) > 0.99  # the allocator handed back a poisoned block


def test_a_real_out_of_memory_is_read_as_one(device):
    with pytest.raises(Exception) as caught:
        torch.empty(device.vendor.xpu_facts().memory_bytes * 4, dtype=torch.uint8, device="xpu")
    assert device.classify(caught.value) is Failure.OUT_OF_MEMORY


def test_the_lowering_states_this_devices_facts(device):
    from kforge_xpu.lowering import kforge_lower

    registry = BackendRegistry(build_plugin_manager(PLUGINS))
    lowering = kforge_lower(registry.get("xpu").backend, load_problem(EXAMPLE / "gemm_epilogue.py"), None)
    assert device.hardware_name() in lowering.hardware and "$" not in lowering.programming_model


@pytest.fixture(scope="module")
def harness(device, tmp_path_factory):
    from kforge_core.harness import Harness

    settings = Settings(cache_dir=tmp_path_factory.mktemp("kforge-cache"),
                        harness=HarnessSettings(trials=3, repetitions=20, baselines=("eager", "compile")))
    backend = BackendRegistry(build_plugin_manager(PLUGINS)).get("xpu").backend
    with Harness(backend=backend, problem=load_problem(EXAMPLE / "gemm_epilogue.py"), settings=settings,
                 plugins=PLUGINS) as harness:
        yield harness


def test_the_example_compiles_verifies_and_is_profiled(harness):
    verdict = harness.evaluate(Candidate.from_path(EXAMPLE / "gemm_epilogue_triton.py", label="example"),
                               profile=True)
    assert verdict.compile.ok and verdict.correct, verdict.message
    summary = harness.summarize(verdict.profile)
    assert "linear_sigmoid_residual_kernel" in summary.text
    print(f"example: {verdict.runtime.median:.4f} ms; speedups {dict(verdict.speedups)}\n{summary.text}")


def test_the_candidates_are_judged_on_the_device(harness):
    unfused = harness.evaluate(Candidate.from_path(CANDIDATES / "gemm_then_epilogue.py", label="unfused"),
                               measure=False)
    wrong = harness.evaluate(Candidate.from_path(CANDIDATES / "epilogue_without_residual.py", label="wrong"),
                             measure=False)
    assert unfused.correct, unfused.message
    assert wrong.failure is Failure.MISMATCH, wrong.to_json()
