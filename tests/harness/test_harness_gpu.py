"""The harness on an NVIDIA GPU: the cheats only a GPU can show (side streams, persisting L2, stale device
memory), device faults that poison the CUDA context, L2 flushing, and KernelBench CUDA candidates.

Run on the GPU machine: ``pytest -m gpu tests/harness``. The candidates build a small CUDA extension once
(``gpu_kernels.py``; a minute or two with nvcc), cached for the session.
"""

from __future__ import annotations

import ctypes
import os
import warnings

import pytest
import torch

from kforge_core.device import FIELD_FLUSH_BYTES
from kforge_core.harness import flags as F
from kforge_core.records import Failure

from .helpers import TORCH_CUDA, candidate, problem, settings_for

pytestmark = [
    pytest.mark.gpu,
    pytest.mark.skipif(not torch.cuda.is_available(), reason="needs an NVIDIA GPU"),
]

# a call's own limit too: with the suite's GPU tests eight at a time beside each other's extension builds, the
# side-stream candidate's first call once took more than the default 15 s
GPU = {"compile_timeout_s": 900, "verify_timeout_s": 300, "timing_timeout_s": 300, "profile_timeout_s": 300,
       "call_timeout_s": 60}


def codes(verdict) -> dict[str, bool]:
    return {flag.code: flag.blocking for flag in verdict.flags}


@pytest.fixture(scope="module")
def gpu_harness(cache_dir):
    from kforge_core.harness import Harness

    from .helpers import SELECTION

    with Harness(backend=TORCH_CUDA, problem=problem("relu_scale"), plugins=SELECTION,
                 settings=settings_for(cache_dir, **GPU)) as harness:
        yield harness


def test_a_cuda_kernel_candidate_is_correct_and_timed_with_the_l2_flushed(gpu_harness):
    verdict = gpu_harness.evaluate(candidate("gpu_relu_scale"))
    assert verdict.correct, verdict.message
    assert verdict.flags == ()
    method = verdict.method
    assert method.device == "cuda:0"
    # twice the L2, and no less than the field's 256 MiB (the launch window the events timer leaves uncounted)
    assert method.l2_flush_bytes == max(2 * torch.cuda.get_device_properties(0).L2_cache_size, FIELD_FLUSH_BYTES)
    assert "torch.cuda.synchronize() (device-wide: every stream)" in method.synchronize
    assert verdict.speedup("eager") is not None


def test_a_kernelbench_cuda_candidate_evaluates_as_it_is(gpu_harness):
    verdict = gpu_harness.evaluate(candidate("gpu_kernelbench"))
    assert verdict.correct, verdict.message


def test_1_stale_device_memory_fools_a_naive_check_but_not_the_harness(gpu_harness):
    # the cheat is real: compute the reference, keep a copy, free the result, then "compute" with empty_like
    # (16 MiB tensors: above 10 MiB each block is a segment of its own, so the allocator's choice is certain)
    torch.cuda.empty_cache()
    x = torch.randn(2048, 2048, device="cuda")
    reference = torch.relu(x) * 2.0
    expected = reference.clone()
    del reference
    cheat = torch.empty_like(x)
    assert torch.equal(cheat, expected)  # the caching allocator handed back the block holding the answer
    verdict = gpu_harness.evaluate(candidate("gpu_stale_output"))
    assert not verdict.correct
    assert codes(verdict)[F.STALE_OUTPUT] is True


def test_2_work_on_a_side_stream_is_caught(gpu_harness):
    verdict = gpu_harness.evaluate(candidate("gpu_side_stream"))
    assert verdict.failure is Failure.CHEAT, verdict.message
    assert codes(verdict)[F.ASYNC_OUTPUT] is True


def test_2_side_stream_work_is_counted_by_the_timer(cache_dir, tmp_path, monkeypatch):
    from kforge_core.candidate_module import import_candidate
    from kforge_core.devices import make_device
    from kforge_core.harness.worker.reference import clone_values, reference_data
    from kforge_core.harness.worker.run_timing import time_runs

    # the extension the workers built, not a second build in this process
    monkeypatch.setenv("TORCH_EXTENSIONS_DIR", os.environ.get("TORCH_EXTENSIONS_DIR",
                                                              str(cache_dir / "torch_extensions")))
    settings = settings_for(cache_dir).harness
    device = make_device(TORCH_CUDA)
    reference = reference_data(problem("relu_scale"), device, settings)
    model = import_candidate(candidate("gpu_side_stream"), tmp_path).ModelNew(2.0)
    runs = time_runs(model, reference, device, settings)
    timed = runs.samples_ms
    # the caller's stream and the side stream, though the caller's stream ran no kernel of the candidate's
    assert runs.device_streams == 2
    ours = sorted(timed["wall"])
    naive = []  # events on the caller's stream only, as many harnesses time kernels
    for _ in range(4):
        args = clone_values(reference.pool[0])
        start, end = torch.cuda.Event(enable_timing=True), torch.cuda.Event(enable_timing=True)
        start.record()
        model(*args)
        end.record()
        end.synchronize()
        naive.append(start.elapsed_time(end))
        torch.cuda.synchronize()
    assert ours[len(ours) // 2] > 10.0  # the side stream's spin (tens of ms) is in the measurement
    assert sorted(naive)[len(naive) // 2] < 0.5 * ours[len(ours) // 2]  # a current-stream timer misses it
    busy = sorted(timed["device"])
    assert busy[len(busy) // 2] > 10.0  # the device timer counts the side stream's kernels (CUPTI, every stream)
    events = sorted(timed["events"])
    assert events[len(events) // 2] < 0.5 * busy[len(busy) // 2]  # the events timer misses it, as KernelBench's


def test_2_side_stream_work_cannot_hide_from_the_events_timer(cache_dir):
    from kforge_core.harness import Harness

    from .helpers import SELECTION

    with Harness(backend=TORCH_CUDA, problem=problem("relu_scale"), plugins=SELECTION,
                 settings=settings_for(cache_dir, timer="events", **GPU)) as harness:
        verdict = harness.evaluate(candidate("gpu_side_stream"))
    assert verdict.failure is Failure.CHEAT and codes(verdict)[F.ASYNC_OUTPUT] is True
    assert verdict.runtime is None  # a cheat never counts as a speedup


def test_every_timer_times_a_known_kernel(cache_dir):
    """gpu_relu_scale's one kernel over 256x256 floats: microseconds by the device's and the events' account, and
    the headline is the timer asked for."""
    from kforge_core.harness import Harness

    from .helpers import SELECTION

    with Harness(backend=TORCH_CUDA, problem=problem("relu_scale"), plugins=SELECTION,
                 settings=settings_for(cache_dir, timer="events", beside_timers="all", **GPU)) as harness:
        verdict = harness.evaluate(candidate("gpu_relu_scale"))
    assert verdict.correct, verdict.message
    figures = dict(verdict.figures)
    assert set(figures) == {"wall", "events", "device"} and verdict.timer == "events"
    assert verdict.runtime == figures["events"]
    # the kernel's microseconds by each account: the device's (CUPTI, runs of its own) and the events' (behind the
    # undrained flush, which covers part of the launch). No order between the timers is asserted: GPU tests share
    # the GPU with each other (pytest -n), and another process's work lands in the events' and wall windows
    assert 0 < figures["device"].median < 0.5
    assert 0 < figures["events"].median < 0.5
    assert set(verdict.speedups_by_timer) == {"wall", "events", "device"}
    assert dict(verdict.baseline_figures)["eager"] and verdict.baseline_sources


def test_the_events_timer_holds_the_queue_so_a_slow_launch_is_not_counted():
    """A call whose host side spins 3 ms before it launches one small kernel (a launch-bound network's launch, past
    the 1 ms the hold was once capped at): the wall clock counts the 3 ms; the events, queued behind the flush and a
    hold of twice the launch, count the kernel alone. The hold itself lasts about what it was asked for."""
    import time
    import types

    from kforge_core.harness.worker.run_timing import time_runs
    from kforge_core.settings import HarnessSettings
    from kforge_core.devices import make_device
    from kforge_cuda import CUDA

    device = make_device(CUDA)
    device.start()
    start, end = torch.cuda.Event(enable_timing=True), torch.cuda.Event(enable_timing=True)
    device.hold(0.5)  # the first hold measures the clock
    device.synchronize()
    start.record()
    device.hold(0.5)
    end.record()
    end.synchronize()
    assert 0.35 < start.elapsed_time(end) < 0.8
    start.record()
    device.hold(10.0)
    end.record()
    end.synchronize()
    assert 8.0 < start.elapsed_time(end) < 12.0

    def call(x: torch.Tensor) -> torch.Tensor:
        until = time.perf_counter() + 0.003
        while time.perf_counter() < until:
            pass
        return x.add(1)

    reference = types.SimpleNamespace(pool=[[torch.ones(1024, device="cuda")]], pool_seeds=[7])
    timed = time_runs(call, reference, device, HarnessSettings(warmup=3, repetitions=30))
    wall, events = (sorted(timed.samples_ms[name])[15] for name in ("wall", "events"))
    assert wall > 3.0
    assert events < 0.2, (wall, events)  # unheld, the flush would cover 0.1 ms of the 3
    past, held, _ = timed.launch_past_hold  # the launches inside their holds (twice the 3 ms spin), but where the
    assert held == 30 and past <= 2, timed.launch_past_hold  # busy test host preempted the spin past it


@pytest.fixture(scope="module")
def outside_harness(cache_dir):
    """Candidates in PyTorch (no extension to build), under the report policy, eager timed beside them."""
    from kforge_core.harness import Harness

    from .helpers import SELECTION

    with Harness(backend=TORCH_CUDA, problem=problem("relu_scale"), plugins=SELECTION,
                 settings=settings_for(cache_dir, repetitions=20, timing_target_ms=0, beside_timers="all",
                                       cheat_policy="report", **GPU)) as harness:
        yield harness


def test_the_outside_clock_agrees_with_an_honest_candidate_on_every_timer(outside_harness):
    verdict = outside_harness.evaluate(candidate("relu_scale_torch"))
    assert verdict.correct, verdict.message
    outside = {figure.timer: figure for figure in verdict.outside_clock}
    assert set(outside) == {"wall", "events", "device"}
    assert all(not figure.contradiction and figure.calls == 20 for figure in outside.values()), outside
    wall = outside["wall"]
    assert wall.overhead_ms > 0 and wall.worker_ms >= wall.outside_ms - wall.slack_ms and not wall.note
    assert outside["events"].worker_ms <= outside["events"].outside_ms  # a figure lies inside its call


def test_the_outside_clock_contradicts_timers_replaced_on_the_gpu_devices_classes(outside_harness):
    """Whether or not an honest candidate's window came first (a prior of the baselines then stands after two
    blocks: the ten calls the outside clock needs to bound a wall figure from below)."""
    verdict = outside_harness.evaluate(candidate("gpu_timer_class_patch"))
    assert verdict.failure is Failure.CHEAT, verdict.message
    assert codes(verdict).get(F.TIMING_MISMATCH) is True, (verdict.message, codes(verdict), verdict.outside_clock)
    wall = next(figure for figure in verdict.outside_clock if figure.timer == "wall")
    # 300 ms a call, said 1 us; the lower bound is an interval less the most any baseline call took beyond its
    # figure, which other processes on the same GPU can make tens of milliseconds, now and then about a hundred
    assert wall.worker_ms < 0.01 and wall.outside_ms + wall.overhead_ms > 270 and wall.contradiction


def test_a_candidate_replaying_a_cuda_graph_with_random_draws_is_judged_as_pytorch_runs_it(outside_harness):
    verdict = outside_harness.evaluate(candidate("gpu_graph_rng"))
    assert verdict.correct, verdict.message
    assert verdict.speedup("eager") is not None


def test_a_failed_graph_capture_the_candidate_caught_is_not_a_harness_error(outside_harness):
    # the capture leaves the device's generator expecting its end; KForge's next input draw would raise without
    # the repair, and the verdict would be KForge's harness_error
    verdict = outside_harness.evaluate(candidate("gpu_graph_capture_fails"))
    assert verdict.failure is None, verdict.message
    assert verdict.correct, verdict.message
    assert verdict.worker_replaced  # what else the unfinished capture left in its process goes with the process


def test_the_generator_left_by_a_failed_capture_draws_again_after_the_repair():
    from kforge_core.harness.worker.random_state import draws_on

    device = torch.device("cuda")
    assert draws_on(device) is False
    try:
        with torch.cuda.graph(torch.cuda.CUDAGraph()):
            torch.cuda.synchronize()
    except Exception:
        pass
    with pytest.raises(RuntimeError, match="graph capture"):
        torch.empty(1, device=device).uniform_()
    assert draws_on(device) is True
    torch.manual_seed(3)
    first = torch.randn(4, device=device)
    torch.manual_seed(3)
    assert torch.equal(first, torch.randn(4, device=device))


def test_3_outputs_while_timing_are_checked_on_the_gpu(gpu_harness):
    verdict = gpu_harness.evaluate(candidate("gpu_cached"))
    assert verdict.verify.correct, verdict.message
    assert verdict.failure is Failure.CHEAT
    assert codes(verdict)[F.CACHED_OUTPUT] is True


def test_8_persisting_l2_is_caught_and_reset(gpu_harness):
    verdict = gpu_harness.evaluate(candidate("gpu_l2_persist"))
    assert verdict.verify.correct, verdict.message
    assert verdict.failure is Failure.CHEAT
    assert codes(verdict)[F.L2_PERSISTENCE] is True


def test_the_harness_restores_the_persisting_l2_set_aside():
    from kforge_core.devices import make_device

    ops = make_device(TORCH_CUDA)
    assert ops.vendor.persisting_l2_change() is None  # nothing touched it: the driver's own default is not a cheat
    libcuda = ctypes.CDLL("libcuda.so.1")
    most = ctypes.c_int(0)
    assert libcuda.cuDeviceGetAttribute(ctypes.byref(most), ctypes.c_int(108), ctypes.c_int(0)) == 0
    assert libcuda.cuCtxSetLimit(ctypes.c_int(0x06), ctypes.c_size_t(most.value)) == 0
    assert ops.vendor.persisting_l2_change() is not None
    assert [change.flag for change in ops.changed_state()] == [F.L2_PERSISTENCE]
    ops.restore_state()
    assert ops.vendor.persisting_l2_change() is None and ops.changed_state() == ()


@pytest.mark.parametrize("name", ["gpu_illegal_address", "gpu_device_assert"])
def test_a_device_fault_replaces_the_worker_and_evaluation_carries_on(gpu_harness, name):
    verdict = gpu_harness.evaluate(candidate(name))
    assert verdict.failure is Failure.DEVICE_FAULT, verdict.message
    assert verdict.worker_replaced
    after = gpu_harness.evaluate(candidate("gpu_relu_scale", label=f"after-{name}"))
    assert after.correct, after.message


def test_7_float16_work_in_a_float32_problem_is_caught_on_the_gpu(cache_dir):
    from kforge_core.harness import Harness

    from .helpers import SELECTION

    settings = settings_for(cache_dir, cheat_policy="report", tolerances={"float32": (5e-2, 5e-2)}, **GPU)
    with Harness(backend=TORCH_CUDA, problem=problem("linear_relu"), settings=settings, plugins=SELECTION) as h:
        verdict = h.evaluate(candidate("gpu_matmul_fp16"))
    assert all(t.passed for t in verdict.verify.trials)
    assert verdict.failure is Failure.CHEAT
    assert codes(verdict)[F.PRECISION_DOWNGRADE] is True


def test_profile_on_the_gpu_lists_device_kernels(gpu_harness):
    verdict = gpu_harness.evaluate(candidate("gpu_relu_scale"), profile=True)
    assert verdict.correct, verdict.message
    names = [k.name for k in verdict.profile.kernels]
    assert any("relu_scale_kernel" in name for name in names), names
    assert "relu_scale_kernel" in gpu_harness.summarize(verdict.profile).text


def test_the_referee_puts_a_large_shipped_output_together_in_page_locked_memory(tmp_path):
    from kforge_core.harness.worker.host_copies import PAGE_LOCKED_FROM_BYTES
    from kforge_core.harness.worker.output_files import read_outputs, write_outputs

    output = torch.randn(PAGE_LOCKED_FROM_BYTES // 4 + 5)
    paths, digests = write_outputs(tmp_path / "out", [output], {}, piece_bytes=PAGE_LOCKED_FROM_BYTES // 4)
    (read,), _ = read_outputs(paths, digests, for_device=True)
    assert len(paths) == 5 and read.is_pinned() and torch.equal(read, output)
    (plain,), _ = read_outputs(*write_outputs(tmp_path / "again", [output], {}, piece_bytes=PAGE_LOCKED_FROM_BYTES // 4))
    assert not plain.is_pinned() and torch.equal(plain, output)  # bound for the host: nothing locked


def test_a_large_output_comes_to_the_host_through_page_locked_memory_bit_for_bit():
    from kforge_core.harness.worker.host_copies import PAGE_LOCKED_FROM_BYTES, host_copy

    large = torch.randn(PAGE_LOCKED_FROM_BYTES // 4 + 3, device="cuda")
    strided = torch.randn(64, 64, device="cuda").t()
    copies = [host_copy(large), host_copy(strided)]
    assert copies[0].is_pinned() and not copies[1].is_pinned()
    assert torch.equal(copies[0], large.cpu()) and torch.equal(copies[1], strided.cpu()) and copies[1].is_contiguous()


def test_comparing_an_output_of_many_chunks_waits_for_the_device_once_when_it_passes(monkeypatch):
    from kforge_core.harness.worker import compare

    monkeypatch.setattr(compare, "CHUNK_ELEMENTS", 1 << 16)
    reference = torch.randn(1 << 22, device="cuda")  # 64 chunks
    output = reference + 1e-6
    torch.cuda.synchronize()
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        torch.cuda.set_sync_debug_mode("warn")
        try:
            passed = compare.compare_outputs([output], [reference], [(1e-4, 1e-4)])
            difference = compare.max_difference([output], [reference])
        finally:
            torch.cuda.set_sync_debug_mode("default")
    waits = [w for w in caught if "called a synchronizing" in str(w.message)]
    assert passed.passed and 0 < passed.max_abs_error < 1e-5 and 0 < difference < 1e-5
    assert len(waits) <= 2, [str(w.message) for w in waits]  # one each; four for each chunk before
    output[70000] += 1.0  # a failure is compared again a chunk at a time, for its message
    failed = compare.compare_outputs([output], [reference], [(1e-4, 1e-4)])
    assert failed.message.startswith("1 of 4,194,304 elements") and "[70000]" in failed.message


def test_the_referee_keeps_the_trials_it_compares_across_on_the_device_for_a_small_problem(tmp_path):
    from kforge_core.devices import make_device
    from kforge_core.harness.protocol import Shipped
    from kforge_core.harness.call_kinds import TRIAL
    from kforge_core.harness.worker.expected import expected_for
    from kforge_core.harness.worker.host_copies import host_copy
    from kforge_core.harness.worker.judge import Judge
    from kforge_core.harness.worker.output_files import write_outputs

    from .helpers import QUICK

    expected = expected_for(problem("relu_scale"), make_device(TORCH_CUDA), QUICK, TORCH_CUDA)
    kept = {}
    for keep_on_device in (False, True):
        judge = Judge(expected, QUICK, for_device=True, keep_on_device=keep_on_device)
        for number, seed in enumerate(range(expected.data.seed, expected.data.seed + 3)):
            written = write_outputs(tmp_path / f"{keep_on_device}-{number:05d}.pt",
                                    [host_copy(o) for o in expected.outputs(seed)], {})
            assert judge.judge(Shipped(f"trial seed {seed}", TRIAL, seed, *written, expected.structure)).passed
        kept[keep_on_device] = (judge.session.first[0].device.type, judge.session.previous[0][0].device.type,
                                judge.session.change)
    assert kept[True][:2] == ("cuda", "cuda") and kept[False][:2] == ("cpu", "cpu")
    assert kept[True][2] == kept[False][2] > 0  # the outputs moved between trials, the same seen from either


def test_the_gpus_peaks_come_from_its_datasheet_or_its_facts(cache_dir):
    """The device states its peaks with their sources; a datasheet's bandwidth agrees with the driver's memory clock
    and bus width within a fifth (both describe the same memory)."""
    from kforge_core.devices import make_device
    from kforge_nvidia.driver import MEMORY_BUS_BITS, MEMORY_CLOCK_KHZ, driver_attributes
    from kforge_nvidia.peaks import datasheet_of

    device = make_device(TORCH_CUDA)
    device.start()
    peaks = device.peaks(cache_dir)
    assert peaks.bandwidth is not None and peaks.rate("fp32") is not None and peaks.rate("fp16 matrix") is not None
    assert peaks.vector_units == "CUDA cores" and peaks.matrix_units == "tensor cores"
    assert peaks.cache_bytes == torch.cuda.get_device_properties(0).L2_cache_size
    if datasheet_of(device.hardware_name()) is not None:
        assert "datasheet" in peaks.bandwidth.source and not peaks.bandwidth.measured
        clock_khz, bus_bits = driver_attributes(0, (MEMORY_CLOCK_KHZ, MEMORY_BUS_BITS))
        if clock_khz and bus_bits:
            assert 0.8 < peaks.bandwidth.value / (2 * clock_khz * 1e3 * bus_bits / 8) < 1.25


def test_an_honest_copy_is_placed_below_the_speed_of_light_and_never_flagged(cache_dir):
    """wide_relu (32 MiB in, 32 MiB out) in PyTorch: a memory-bound bound on the GPU's datasheet bandwidth, the
    candidate and its eager baseline at a fraction of it, and no figure below the physical floor."""
    from kforge_core.harness import Harness

    from .helpers import SELECTION

    with Harness(backend=TORCH_CUDA, problem=problem("wide_relu"), plugins=SELECTION,
                 settings=settings_for(cache_dir, timer="events", cheat_policy="report", baselines=("eager",),
                                       **GPU)) as harness:
        verdict = harness.evaluate(candidate("wide_relu_torch"))
    assert verdict.correct, verdict.message
    assert F.FASTER_THAN_HARDWARE not in codes(verdict)
    light = verdict.speed_of_light
    bound = light.bound
    assert bound.device == torch.cuda.get_device_name(0) and bound.binds == "memory"
    assert bound.sol_ms == pytest.approx(64 * 2**20 / bound.bandwidth * 1e3)
    assert light.timer == "events" and 0 < light.fraction <= 1 and 0 < dict(light.baseline_fractions)["eager"] <= 1
    # the floor: the input read, the output beyond the L2; the figure is above it
    l2 = torch.cuda.get_device_properties(0).L2_cache_size
    assert bound.floor_bytes == 32 * 2**20 + max(32 * 2**20 - l2, 0)
    assert verdict.runtime_ms > bound.flag_threshold_ms
