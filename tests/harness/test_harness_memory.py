"""Memory in proportion to the problem: one trial at a time, the timing pool within the free memory, memory handed
back between problems, and a worker short of memory reported as such, never as a fault of the problem."""

from __future__ import annotations

import weakref

import pytest
import torch

from kforge_core.bench.slot import _start_failure
from kforge_core.device import MemoryStats
from kforge_core.devices.cpu import CpuDevice
from kforge_core.devices.harness_device import HarnessDevice
from kforge_core.harness import Harness
from kforge_core.harness.host.pool import WorkerStartError
from kforge_core.harness.worker.expected import expected_for
from kforge_core.harness.worker.random_state import GeneratorStates
from kforge_core.harness.worker.reference import SeededPool, reference_data, resident_sets
from kforge_core.records import Failure
from kforge_core.settings import HarnessSettings

from .helpers import QUICK, SELECTION, TORCH_CPU, candidate, problem, settings_for

# What a worker on the host CPU may map: about 650 MiB are torch and KForge themselves. Eight trials of wide_relu
# (32 MiB in, 32 MiB out) with their inputs, the reference's copies and outputs held at once, and a timing pool beside
# them, did not fit in 2560 MiB; one trial at a time fits in 1792.
TIGHT_MB = 2048


class CountingCpu(CpuDevice):
    """The host CPU, counting how often the allocator's cache is handed back; its memory use as a test sets it."""

    def __init__(self) -> None:
        super().__init__(TORCH_CPU)
        self.emptied = 0
        self.stats: MemoryStats | None = None

    def empty_cache(self) -> None:
        self.emptied += 1

    def memory(self) -> MemoryStats:
        return self.stats if self.stats is not None else super().memory()


class CountingDevice(HarnessDevice):
    """A worker's device on a :class:`CountingCpu`."""

    def __init__(self) -> None:
        super().__init__(CountingCpu())

    @property
    def emptied(self) -> int:
        return self.vendor.emptied


def test_a_problem_whose_trials_would_not_fit_at_once_is_evaluated(make_harness):
    harness = make_harness("wide_relu", trials=8, memory_limit_mb=TIGHT_MB)
    verdict = harness.evaluate(candidate("wide_relu_numpy"))
    assert verdict.correct, verdict.message
    assert [t.seed for t in verdict.verify.trials] == [42 + t for t in range(8)]


@pytest.fixture(scope="module")
def wide_harness(cache_dir):
    """A harness for wide_relu whose timing pool holds no set (input_pool_mb = 1: none fits, none is kept) and whose
    workers may write files of 8 MiB at most (each output is 32 MiB), for the two tests below."""
    settings = settings_for(cache_dir, spare_workers=0, baselines=(), trials=3, repetitions=2, input_pool_mb=1,
                            file_size_limit_mb=8)
    with Harness(backend=TORCH_CPU, problem=problem("wide_relu"), settings=settings, plugins=SELECTION) as harness:
        yield harness


def test_between_trials_the_candidates_worker_holds_the_inputs_and_nothing_else_of_a_calls_size(wide_harness):
    # neither a copy of the inputs made before the call (they are made again from their seed to see what changed)
    # nor the previous call's outputs (a weak reference tells a kept buffer from a reused address)
    verdict = wide_harness.evaluate(candidate("memory_census"))
    assert verdict.correct, verdict.message
    seen = [int(line.rsplit(":", 1)[1]) for line in verdict.stdout.splitlines() if "live buffers" in line]
    assert len(seen) >= 4 and max(seen) == 1, seen  # the call's inputs, nothing else


def test_outputs_larger_than_a_worker_may_write_in_one_file_are_judged(wide_harness):
    verdict = wide_harness.evaluate(candidate("wide_relu_numpy"))
    assert verdict.correct, verdict.message


def test_a_worker_short_of_memory_is_out_of_memory_never_an_invalid_problem(make_harness):
    harness = make_harness("wide_relu", memory_limit_mb=640)  # not even the reference's one call fits
    with pytest.raises(WorkerStartError) as raised:
        harness.evaluate(candidate("wide_relu_numpy"))
    assert raised.value.failure is Failure.OUT_OF_MEMORY, str(raised.value)
    assert _start_failure(raised.value) == "out_of_memory"
    assert _start_failure(WorkerStartError("the reference raised", failure=Failure.HARNESS)) == "invalid_problem"


def test_a_worker_prepared_for_a_problem_holds_none_of_its_models_weights():
    import gc

    data = reference_data(problem("linear_relu"), CountingDevice(), QUICK)
    weight = tuple(data.module.Model(*data.init_inputs).linear.weight.shape)
    held, seen, todo = [], set(), [data]
    while todo:  # everything the problem's data reaches, the problem's module and its classes apart
        item = todo.pop()
        if id(item) in seen or isinstance(item, (type, type(weakref))) or item is data.module:
            continue
        seen.add(id(item))
        if isinstance(item, torch.Tensor):
            held.append(tuple(item.shape))
        todo.extend(gc.get_referents(item))
    assert held and weight not in held, held  # the inputs, never the weights
    parameters, buffers = data.fresh_state()  # built when a candidate's fallback asks, as the seed makes them
    torch.manual_seed(QUICK.seed)
    again = data.module.Model(*data.init_inputs)
    assert torch.equal(parameters["linear.weight"], again.linear.weight) and buffers == {}


def test_timing_sets_stay_resident_within_one_sets_size_and_a_quarter_of_the_free_memory():
    settings = HarnessSettings(warmup=3, repetitions=20, input_pool_mb=1024)
    assert resident_sets(settings, set_bytes=1 << 20, free_bytes=0) == 23  # small sets: one per run, kept
    assert resident_sets(settings, set_bytes=1 << 20, free_bytes=40 << 20) == 10  # a quarter of 40 MiB
    assert resident_sets(settings, set_bytes=30 << 20, free_bytes=80 << 30) == 2  # sets kept within the floor
    assert resident_sets(settings, set_bytes=256 << 20, free_bytes=80 << 30) == 0  # a large set: made for each run
    assert resident_sets(settings, set_bytes=1 << 20, free_bytes=8 << 20) == 2
    assert resident_sets(settings, set_bytes=1 << 20, free_bytes=5 << 20) == 0  # one would fit: none is kept


def test_every_timed_run_gets_a_distinct_input_set_made_on_demand_beyond_the_resident_ones():
    data = reference_data(problem("relu_scale"), CountingDevice(), QUICK)
    runs = QUICK.warmup + QUICK.repetitions
    assert len(data.pool) == runs == len(set(data.pool_seeds))
    first = (data.pool[0], GeneratorStates.now(data.device))
    one_kept = SeededPool(data.module, data.pool_seeds, data.device, 1, first)
    made = one_kept[runs - 1]
    assert made is not one_kept[runs - 1] and torch.equal(made[0], one_kept[runs - 1][0])  # made again, the same
    assert torch.equal(made[0], data.pool[runs - 1][0])  # as the resident set of that seed
    assert not torch.equal(made[0], one_kept[0][0])


def test_a_runs_inputs_are_a_clone_of_a_kept_set_or_made_for_it_never_made_and_then_cloned(monkeypatch):
    """Made and then cloned, a large problem's run held three input sets in the allocator's cache at its call."""
    from kforge_core.harness.worker import reference as reference_module
    data = reference_data(problem("relu_scale"), CountingDevice(), QUICK)
    runs = QUICK.warmup + QUICK.repetitions
    first = (data.pool[0], GeneratorStates.now(data.device))
    pool = SeededPool(data.module, data.pool_seeds, data.device, 2, first)
    made = []
    real = reference_module.seeded_inputs
    monkeypatch.setattr(reference_module, "seeded_inputs", lambda *a: made.append(real(*a)) or made[-1])
    cloned = pool.fresh(1)
    assert cloned[0] is not pool.kept[1][0] and torch.equal(cloned[0], pool.kept[1][0]) and made == []
    own = pool.fresh(runs - 1)
    assert len(made) == 1 and own[0] is made[0][0]  # the set made for the run is the run's: no copy of it
    assert torch.equal(own[0], data.pool[runs - 1][0])


def test_the_referees_host_copies_of_the_reference_outputs_are_made_as_shipped_outputs_are(monkeypatch):
    """Through ``host_copy``, which takes a large device tensor through page-locked memory (1.5 s into fresh
    pageable memory for a 2.1 GB output on an H100, 0.04 s page-locked; see the GPU test of ``host_copy``)."""
    from kforge_core.harness.worker import expected as expected_module
    copied = []
    monkeypatch.setattr(expected_module, "host_copy", lambda t: copied.append(t) or t.cpu())
    expected_module._cache.clear()
    expected = expected_for(problem("relu_scale"), CountingDevice(), QUICK, TORCH_CPU)
    assert len(copied) == 1 + len(expected.kept)  # the first trial's, compared with the others, and those kept
    expected_module._cache.clear()


def test_moving_to_another_problem_drops_the_previous_ones_data_and_empties_the_cache():
    device = CountingDevice()
    settings = QUICK
    first = reference_data(problem("relu_scale"), device, settings)
    kept = weakref.ref(first.pool[0][0])
    expected = weakref.ref(expected_for(problem("relu_scale"), device, settings, TORCH_CPU).model)
    del first
    emptied = device.emptied
    reference_data(problem("tiny_output"), device, settings)
    expected_for(problem("tiny_output"), device, settings, TORCH_CPU)
    assert kept() is None and expected() is None  # nothing of relu_scale is left in the process
    assert device.emptied > emptied


def test_a_workers_problem_data_holds_no_reference_output():
    data = reference_data(problem("relu_scale"), CountingDevice(), QUICK)
    assert not any("output" in name for name in vars(data) if name != "output_bytes")
    assert not any(hasattr(trial, "outputs") for trial in data.trials)


def test_a_worker_about_to_wait_hands_back_a_large_unused_cache_and_keeps_a_small_one():
    from kforge_core.device import MemoryStats
    from kforge_core.harness.worker.memory import hand_back_idle_cache

    device = CountingDevice()
    gib = 1 << 30
    for reserved, handed_back in ((gib + gib // 20, False), (3 * gib, True)):  # unused: 0.05 and 2 of 10 GiB
        device.vendor.stats = MemoryStats(allocated=gib, reserved=reserved, total=10 * gib)
        emptied = device.emptied
        assert hand_back_idle_cache(device) is handed_back
        assert device.emptied - emptied == int(handed_back)


def test_a_worker_about_to_wait_on_a_problem_large_for_its_device_hands_back_any_unused_cache():
    from kforge_core.device import MemoryStats
    from kforge_core.harness.worker.memory import hand_back_idle_cache

    device = CountingDevice()
    gib = 1 << 30
    for reserved, handed_back in ((gib, False), (gib + gib // 20, True)):  # unused: none, and 0.05 of 10 GiB
        device.vendor.stats = MemoryStats(allocated=gib, reserved=reserved, total=10 * gib)
        emptied = device.emptied
        assert hand_back_idle_cache(device, large=True) is handed_back
        assert device.emptied - emptied == int(handed_back)


class ClearingCpu(CountingCpu):
    """A device whose memory handed back is cleared afterwards, at 10 GiB a second, beside other processes' work."""

    cleared_bytes_per_s = 10.0 * (1 << 30)

    def empty_cache(self) -> None:
        super().empty_cache()
        self.stats = MemoryStats(allocated=self.stats.allocated, reserved=self.stats.allocated,
                                 total=self.stats.total)


def test_a_worker_that_hands_back_its_cache_returns_once_the_device_has_cleared_it(monkeypatch):
    # the clearing slows another worker's memory-bound kernels: it must be over before that worker's timed runs
    from types import SimpleNamespace

    from kforge_core.devices import harness_device
    from kforge_core.harness.worker.memory import hand_back_idle_cache

    waits: list[float] = []
    monkeypatch.setattr(harness_device, "time", SimpleNamespace(sleep=waits.append))
    gib = 1 << 30
    device = HarnessDevice(ClearingCpu())
    device.vendor.stats = MemoryStats(allocated=gib, reserved=3 * gib, total=10 * gib)
    assert hand_back_idle_cache(device)
    assert waits == [pytest.approx(0.2)]  # 2 GiB at 10 GiB/s
    assert not hand_back_idle_cache(device, large=True)  # nothing unused: nothing handed back, no wait
    counting = CountingDevice()  # a device that clears nothing after a hand-back: no wait
    counting.vendor.stats = MemoryStats(allocated=gib, reserved=3 * gib, total=10 * gib)
    assert hand_back_idle_cache(counting)
    assert waits == [pytest.approx(0.2)]


def test_an_output_in_the_previous_calls_buffer_is_told_from_a_fresh_one_at_a_reused_address():
    from kforge_core.builtin.torch_verify import _shares_storage, _storages

    kept = torch.ones(1024)
    previous = _storages([kept])
    assert _shares_storage([kept[:512]], previous)  # the candidate's buffer again (a view of it)
    assert not _shares_storage([kept.clone()], previous)
    fresh = torch.zeros(1024)
    freed = torch.ones(8)
    at_freed_address = [(fresh.untyped_storage().data_ptr(), _storages([freed])[0][1])]
    del freed  # the previous call's buffer is gone: an allocation at its address is a fresh one
    assert not _shares_storage([fresh], at_freed_address)


def test_while_the_referee_judges_a_trial_the_candidates_worker_holds_none_of_the_call(tmp_path):
    # the referee may be running the float64 reference then, a large problem's biggest moment: the call's inputs
    # and outputs are freed and a large unused cache handed back before its judgement is asked for
    import gc
    import warnings
    from types import SimpleNamespace

    from kforge_core.builtin.torch_verify import _Run, _run_trial
    from kforge_core.device import MemoryStats
    from kforge_core.harness.protocol import Judged
    from kforge_core.harness.worker.shipping import use_referee
    from kforge_core.timing.stage_timer import StageTimer

    device = CountingDevice()
    data = reference_data(problem("wide_relu"), device, QUICK)
    call_bytes = 2048 * 4096 * 4

    def buffers_of_a_calls_size() -> int:
        gc.collect()
        with warnings.catch_warnings():  # a deprecated torch object met on the way warns when looked at
            warnings.simplefilter("ignore", FutureWarning)
            return len({o.untyped_storage().data_ptr() for o in gc.get_objects()
                        if isinstance(o, torch.Tensor) and o.untyped_storage().nbytes() >= call_bytes})

    class Recording:
        seen: list[tuple[int, int]] = []

        def judge(self, shipped):
            self.seen.append((buffers_of_a_calls_size(), device.emptied))
            return Judged(True, None, "ok", 0.0, 0.0)

    gib = 1 << 30
    device.vendor.stats = MemoryStats(allocated=gib, reserved=3 * gib, total=10 * gib)  # 2 GiB cached unused
    before = buffers_of_a_calls_size()  # what the worker keeps anyway (its resident timing sets)
    emptied = device.emptied
    referee = Recording()
    use_referee(referee)
    try:
        run = _Run()
        for trial in data.trials[:2]:
            assert _run_trial(lambda x: torch.relu(x) * 2.0, trial, "", data, device, QUICK,
                              SimpleNamespace(timer=StageTimer(), workdir=tmp_path, problem=data.problem), run)
    finally:
        use_referee(None)
    assert referee.seen == [(before, emptied + 1), (before, emptied + 2)]


@pytest.mark.parametrize("large", [False, True])
def test_a_large_problems_candidate_worker_hands_back_even_a_small_idle_cache_before_a_trial_is_judged(
        tmp_path, monkeypatch, large):
    from types import SimpleNamespace

    from kforge_core.builtin.torch_verify import _Run, _run_trial
    from kforge_core.device import MemoryStats
    from kforge_core.harness import problem_size
    from kforge_core.harness.protocol import Judged
    from kforge_core.harness.worker.shipping import use_referee
    from kforge_core.timing.stage_timer import StageTimer

    if large:
        monkeypatch.setattr(problem_size, "LARGE_BYTES", 1)
    device = CountingDevice()
    data = reference_data(problem("wide_relu"), device, QUICK)
    gib = 1 << 30
    device.vendor.stats = MemoryStats(allocated=gib, reserved=gib + (1 << 20), total=10 * gib)  # 1 MiB unused

    class Recording:
        def judge(self, shipped):
            return Judged(True, None, "ok", 0.0, 0.0)

    emptied = device.emptied
    use_referee(Recording())
    try:
        assert _run_trial(lambda x: torch.relu(x) * 2.0, data.trials[0], "", data, device, QUICK,
                          SimpleNamespace(timer=StageTimer(), workdir=tmp_path, problem=data.problem), _Run())
    finally:
        use_referee(None)
    assert device.emptied == emptied + (1 if large else 0)


WORKER_BETWEEN_BLOCKS = """
import sys
from pathlib import Path
sys.path[:0] = [TESTS]
from harness.helpers import QUICK, SELECTION, candidate, problem
from harness.test_harness_memory import CountingDevice
from kforge_core.device import MemoryStats
from kforge_core.harness.protocol import Begin, MeasureBaselines, Prepare, RunStage, Time, WorkerInit
from kforge_core.harness.worker.worker import Worker

root = Path(ROOT)
worker = Worker(WorkerInit(tuple(p for p in sys.path if p), SELECTION, "torch-cpu", True, None, QUICK, root / "cache"))
worker.device = device = CountingDevice()
device.vendor.stats = MemoryStats(allocated=1 << 30, reserved=3 << 30, total=10 << 30)  # 2 GiB cached unused
emptied = []
for request in (Prepare(problem("relu_scale")), MeasureBaselines(("eager",), (0, 2)),
                Begin(candidate("relu_scale_numpy"), root / "candidate"), RunStage("compile"), RunStage("verify"),
                Time((0, 2))):
    before = device.emptied
    reply = worker.handle(request)
    assert reply.failure is None, reply.message
    emptied.append(device.emptied - before)
(root / "emptied").write_text(" ".join(map(str, emptied)))
"""


def test_each_timed_block_ends_with_a_large_idle_cache_handed_back_in_the_candidates_worker_as_in_the_baselines(
        tmp_path):
    # the two take turns block by block: what one caches unused sits beside the other's runs
    import subprocess
    import sys
    from pathlib import Path

    tests = str(Path(__file__).resolve().parents[1])
    script = WORKER_BETWEEN_BLOCKS.replace("TESTS", repr(tests)).replace("ROOT", repr(str(tmp_path)))
    done = subprocess.run([sys.executable, "-c", script], cwd=tmp_path, capture_output=True, text=True, timeout=300)
    assert done.returncode == 0, done.stderr[-2000:]
    _, baselines_block, *_, candidates_block = map(int, (tmp_path / "emptied").read_text().split())
    assert baselines_block >= 1 and candidates_block >= 1


def test_the_referee_hands_its_cache_back_before_and_after_the_float64_reference(tmp_path):
    from kforge_core.harness.protocol import Shipped
    from kforge_core.harness.call_kinds import TRIAL
    from kforge_core.harness.worker.judge import Judge
    from kforge_core.harness.worker.output_files import write_outputs

    expected = expected_for(problem("relu_scale"), CountingDevice(), QUICK, TORCH_CPU)
    handed_back = []
    judge = Judge(expected, QUICK, hand_back=lambda: handed_back.append(judge.session.precision_bits))
    seed = expected.data.seed
    for number, trial_seed in enumerate((seed, seed + 1)):
        paths, digests = write_outputs(tmp_path / f"{number:05d}.pt", [o.clone() for o in expected.outputs(trial_seed)], {})
        assert judge.judge(Shipped(f"trial seed {trial_seed}", TRIAL, trial_seed, paths, digests,
                                   expected.structure)).passed
    # before the first trial's float64 reference, once its inputs are in float64, once its call is over, once its
    # precision is known; no more
    assert handed_back == [None, None, None, None]
    assert judge.session.precision_bits is not None


def test_poisoned_words_are_counted_a_chunk_at_a_time_as_in_the_whole(monkeypatch):
    import kforge_core.devices.harness_device as device_module
    device = CountingDevice()
    output = torch.zeros(10_000)
    word = device.vendor.poison_words[0]
    output.view(torch.int32)[2_500:5_000] = word - (1 << 32) if word >= 1 << 31 else word
    whole = device.poisoned_fraction(output)
    monkeypatch.setattr(device_module, "_POISON_CHUNK_WORDS", 999)
    assert device.poisoned_fraction(output) == whole == 0.25



def test_poisoning_claims_the_outputs_blocks_before_it_asks_which_blocks_are_still_free(monkeypatch):
    # claimed first, each output's block is the free block the output will get (or one new block, made once); asked
    # after every free block was claimed, it was a new block at every trial, and the cache grew by it each time
    from kforge_core.device import Device

    order: list[str] = []

    class Snapshotting(Device):
        torch_type = "cpu"

        def __init__(self) -> None:
            super().__init__(TORCH_CPU)

        def free_block_sizes(self) -> list[int]:
            order.append("free blocks asked")
            return [4096, 64]

        def synchronize(self) -> None:
            pass

    real_empty = torch.empty

    def empty(*size, **kwargs):
        order.append(f"claim {size[0] * 4}")
        return real_empty(*size, **kwargs)

    monkeypatch.setattr(torch, "empty", empty)
    Snapshotting().poison([1024])
    assert order == ["claim 1024", "free blocks asked", "claim 4096", "claim 64"]


def test_a_problem_large_for_the_device_is_its_call_at_its_peak_above_a_share_of_its_memory():
    from kforge_core.harness.problem_size import LARGE_SHARE, call_bytes, call_peak_bytes, large_for_device

    wide = problem("wide_relu")
    assert call_bytes(wide) == 2 * 2048 * 4096 * 4  # 32 MiB in, 32 MiB out
    assert call_peak_bytes(wide) == 3 * 2048 * 4096 * 4  # the input, relu's output and the doubled one at once
    assert large_for_device(wide, int(call_peak_bytes(wide) / LARGE_SHARE) - 1)
    assert not large_for_device(wide, int(call_peak_bytes(wide) / LARGE_SHARE))
    assert not large_for_device(wide, 0)  # the device's memory unknown


WIDE_WEIGHTS = """
import torch


class Model(torch.nn.Module):
    def __init__(self, features):
        super().__init__()
        self.linear = torch.nn.Linear(features, features)
        self.register_buffer("scale", torch.ones(features))

    def forward(self, x):
        return self.linear(x) * self.scale


def get_inputs():
    return [torch.randn(2, 4096)]


def get_init_inputs():
    return [4096]
"""


def test_a_models_weights_count_in_its_footprint_so_a_wide_mlp_with_small_inputs_is_large(tmp_path):
    """KernelBench's 2_ShallowWideMLP holds about 14 GB of weights and takes kilobytes of input: judged by its
    inputs and outputs alone it was small, and its processes filled the device."""
    from kforge_core.harness.problem_size import LARGE_SHARE, call_bytes, footprint_bytes, large_for_device
    from kforge_core.problem import load_problem

    (tmp_path / "wide_weights.py").write_text(WIDE_WEIGHTS)
    wide = load_problem(tmp_path / "wide_weights.py")
    assert call_bytes(wide) == 2 * 2 * 4096 * 4  # 32 KiB in, 32 KiB out
    assert wide.weight_bytes == (4096 * 4096 + 4096 + 4096) * 4  # weight, bias, and the buffer
    assert footprint_bytes(wide) == call_bytes(wide) + wide.weight_bytes
    device = int(footprint_bytes(wide) / LARGE_SHARE) - 1  # about 1 GiB: its inputs alone would be small there
    assert call_bytes(wide) < LARGE_SHARE * device and large_for_device(wide, device)


def test_a_footprint_of_a_gibibyte_is_large_on_any_device(tmp_path):
    """On a device of 141 GB a 3 GiB problem is no sixteenth of it: its processes would fit beside each other, but
    their copies would hold many times what one call needs."""
    from kforge_core.harness.problem_size import LARGE_BYTES, LARGE_SHARE, footprint_bytes, large_for_device
    from kforge_core.problem import load_problem

    (tmp_path / "wider.py").write_text(WIDE_WEIGHTS.replace("[4096]", "[16384]").replace("(2, 4096)", "(2, 16384)"))
    wider = load_problem(tmp_path / "wider.py")
    (tmp_path / "wide.py").write_text(WIDE_WEIGHTS)
    wide = load_problem(tmp_path / "wide.py")
    huge = 1 << 50
    assert LARGE_BYTES <= footprint_bytes(wider) < LARGE_SHARE * huge  # no sixteenth of the device
    assert large_for_device(wider, huge)
    assert not large_for_device(wide, huge)  # 64 MiB of weights
    assert not large_for_device(wider, 0)  # the device's memory unknown


@pytest.mark.parametrize("large", [False, True])
def test_the_baselines_get_ready_beside_verification_unless_the_problem_is_large_for_the_device(
        make_harness, monkeypatch, large):
    # for a large problem the baseline worker's inputs and compiled baselines would sit beside the trials' and
    # the float64 reference's: it gets ready once the candidate is verified, and nothing is prepared ahead
    import kforge_core.harness.problem_size as problem_size
    from kforge_core.harness.host.baseline_worker import BaselineWorker
    from kforge_core.harness.host.referee import Referee

    if large:
        monkeypatch.setattr(problem_size, "LARGE_SHARE", 1e-9)
    order: list[str] = []
    get_ready, conclude = BaselineWorker.get_ready, Referee.conclude

    def getting_ready(self, *args, **kwargs):
        order.append("baselines get ready")
        return get_ready(self, *args, **kwargs)

    def concluding(self, kind):
        order.append(f"{kind} concluded")
        return conclude(self, kind)

    monkeypatch.setattr(BaselineWorker, "get_ready", getting_ready)
    monkeypatch.setattr(Referee, "conclude", concluding)
    harness = make_harness("relu_scale", baselines=("eager",))
    harness.timeouts  # a worker has started: the device's memory is known
    verdict = harness.evaluate(candidate("relu_scale_numpy"))
    assert verdict.correct and verdict.baselines, verdict.message
    assert order.index("baselines get ready") > order.index("verify concluded") if large \
        else order.index("baselines get ready") < order.index("verify concluded")
    harness.expect_problem(problem("wide_relu"))
    assert (harness._pool.upcoming is None) is large


class _Tied(torch.nn.Module):
    def __init__(self):
        super().__init__()
        self.first = torch.nn.Linear(4, 4)
        self.second = torch.nn.Linear(4, 4)
        self.second.weight = self.first.weight  # tied
        self.register_buffer("scale", torch.full((4,), 2.0))

    def forward(self, x):
        return self.second(self.first(x)) * self.scale


def test_the_referees_untouched_copy_of_the_model_lies_in_host_memory_and_keeps_its_ties():
    from kforge_core.harness.worker.expected import host_model_copy

    model = _Tied()
    copy = host_model_copy(model)
    assert all(t.device.type == "cpu" for t in (*copy.parameters(), *copy.buffers()))
    assert copy.second.weight is copy.first.weight and copy.first.weight is not model.first.weight
    x = torch.randn(3, 4)
    assert torch.equal(copy(x), model(x))
    with torch.no_grad():
        model.first.weight.add_(1.0)  # the copy is its own
    assert not torch.equal(copy(x), model(x))


def test_a_float64_copy_of_the_model_is_made_tensor_by_tensor_and_a_recurrent_copy_runs_on_its_own_weights():
    from kforge_core.harness.worker.expected import model_copy

    model = _Tied()
    wide = model_copy(model, torch.device("cpu"), torch.float64)
    assert all(t.dtype == torch.float64 for t in (*wide.parameters(), *wide.buffers()))
    assert wide.second.weight is wide.first.weight and model.first.weight.dtype == torch.float32  # its own, tied
    x = torch.randn(3, 4)
    assert torch.allclose(wide(x.double()), model(x).double(), atol=1e-6)
    torch.manual_seed(0)
    lstm = torch.nn.LSTM(8, 16, num_layers=2)
    copied = model_copy(lstm, torch.device("cpu"))
    inputs = torch.randn(5, 1, 8)
    before = copied(inputs)[0]
    with torch.no_grad():
        for parameter in lstm.parameters():  # the copy's flattened weights are its own, not the original's
            parameter.add_(1.0)
    assert torch.equal(copied(inputs)[0], before) and not torch.equal(lstm(inputs)[0], before)


class _ThroughAClosure(torch.nn.Module):
    """A reference whose forward reaches its layer through a closure made in ``__init__``: a deep copy of it would
    still call the original's layer."""

    def __init__(self, in_features: int, out_features: int) -> None:
        super().__init__()
        self.linear = torch.nn.Linear(in_features, out_features)
        self.layer = lambda x: self.linear(x)

    def forward(self, x):
        return torch.relu(self.layer(x))


def test_the_model_that_answers_is_the_one_built_and_its_untouched_copy_another():
    import dataclasses
    from types import SimpleNamespace

    from kforge_core.harness.worker import expected as expected_module

    data = reference_data(problem("linear_relu"), CountingDevice(), QUICK)
    data = dataclasses.replace(data, module=SimpleNamespace(Model=_ThroughAClosure))
    answers = expected_module._compute(data, CountingDevice(), QUICK, TORCH_CPU)
    # the closure the forward calls through reaches the answering model's own layer
    assert answers.model.layer.__closure__[0].cell_contents is answers.model
    assert answers.fresh_model is not answers.model
    assert torch.equal(answers.fresh_model.linear.weight, answers.model.linear.weight)


def test_the_float64_model_is_gone_and_its_cache_handed_back_before_the_parked_weights_come_back(monkeypatch):
    """33_VanillaRNN's referee held its 2.6 GB of float32 weights beside the float64 model's 5.2 GB: the weights came
    back to the device while the frame that had made the float64 model still held it."""
    import gc
    import warnings

    from kforge_core.harness.worker import expected as expected_module

    monkeypatch.setattr(expected_module, "PARKED_FROM_BYTES", 0)  # the layer's weights are parked
    answers = expected_for(problem("linear_relu"), CountingDevice(), QUICK)
    shape = answers.model.linear.weight.shape
    events: list[tuple[str, int]] = []

    def float64_weights() -> int:
        gc.collect()
        with warnings.catch_warnings():  # a deprecated torch object met on the way warns when looked at
            warnings.simplefilter("ignore", FutureWarning)
            return sum(1 for o in gc.get_objects()
                       if isinstance(o, torch.Tensor) and o.dtype == torch.float64 and o.shape == shape)

    real_to = torch.nn.Module.to

    def to(module, *args, **kwargs):
        if module is answers.model:
            events.append(("moved", float64_weights()))
        return real_to(module, *args, **kwargs)

    monkeypatch.setattr(torch.nn.Module, "to", to)
    exact, note = answers.float64_outputs(answers.data.trials[0].seed,
                                          lambda: events.append(("handed back", float64_weights())))
    assert note == "" and exact[0].dtype == torch.float64
    # parked, cache handed back; the float64 model made and its inputs converted, handed back; the float64 call;
    # its model gone and handed back; the weights back
    assert events == [("moved", 0), ("handed back", 0), ("handed back", 1), ("handed back", 0), ("moved", 0)]


def test_no_float32_input_is_alive_while_the_float64_reference_runs(monkeypatch):
    """A 3 GiB GEMM's referee held its second float32 input (1 GiB) through the float64 call: the loop that
    converted the inputs kept the last one in its variable."""
    import weakref

    from kforge_core.harness.worker import expected as expected_module

    answers = expected_for(problem("matmul_two"), CountingDevice(), QUICK)
    made: list[weakref.ref] = []
    real_seeded = expected_module.seeded_inputs

    def seeded(*args, **kwargs):
        inputs = real_seeded(*args, **kwargs)
        made.extend(weakref.ref(t) for t in inputs if isinstance(t, torch.Tensor))
        return inputs

    alive_during_call: list[int] = []
    real_forward = type(answers.fresh_model).forward

    def forward(model, *args):
        if args[0].dtype == torch.float64:
            alive_during_call.append(sum(ref() is not None for ref in made))
        return real_forward(model, *args)

    monkeypatch.setattr(expected_module, "seeded_inputs", seeded)
    monkeypatch.setattr(type(answers.fresh_model), "forward", forward)
    handed_back: list[int] = []
    exact, note = answers.float64_outputs(answers.data.trials[0].seed,
                                          lambda: handed_back.append(sum(ref() is not None for ref in made)))
    assert note == "" and exact[0].dtype == torch.float64
    assert len(made) == 2 and alive_during_call == [0]  # both float32 inputs gone before the call
    assert handed_back[0] == 0  # and gone when the cache was handed back before it


@pytest.mark.gpu
@pytest.mark.skipif(not torch.cuda.is_available(), reason="needs an NVIDIA GPU")
def test_large_weights_wait_in_host_memory_while_the_float64_reference_runs_and_come_back_as_they_were():
    from kforge_core.harness.worker import expected

    model = torch.nn.Linear(8192, 8192 + 1024).cuda()  # 288 MiB of weights: above PARKED_FROM_BYTES
    weight, before = model.weight, model.weight.detach().clone()
    with expected._parked(model, torch.device("cuda")):
        assert model.weight.device.type == "cpu"
    assert model.weight is weight and model.weight.device.type == "cuda" and torch.equal(model.weight, before)
    small = torch.nn.Linear(4, 4).cuda()
    with expected._parked(small, torch.device("cuda")):
        assert small.weight.device.type == "cuda"  # small weights stay
    copy = expected.host_model_copy(model)
    assert copy.weight.device.type == "cpu"
    assert torch.cuda.memory_allocated() < 2 * before.numel() * 4 + (64 << 20)  # model, before; no device copy


class _SmallAcceleratorCpu(CountingCpu):
    """The host CPU standing for an accelerator of 1 MiB: not the host (its model may be parked in host memory),
    and every test problem is large for it."""

    host_cpu = False

    def memory(self) -> MemoryStats:
        return MemoryStats(total=1 << 20)


class _SmallAccelerator(HarnessDevice):
    def __init__(self) -> None:
        super().__init__(_SmallAcceleratorCpu())


def test_a_large_problems_referee_answers_every_timing_set_ahead_and_parks_the_model_between_calls(monkeypatch):
    """``2_ShallowWideMLP``'s referee kept its 8.6 GB of weights on the device while both timing workers held theirs:
    the timing sets' answers were computed when a timed call was judged."""
    from kforge_core.harness.worker import expected as expected_module
    from kforge_core.timing.timed_runs import pool_seeds

    monkeypatch.setattr(expected_module, "PARKED_FROM_BYTES", 0)
    moves: list[str] = []
    real_to = torch.nn.Module.to

    def to(module, *args, **kwargs):
        if type(module).__name__ == "Model":
            moves.append(str(args[0]))
        return real_to(module, *args, **kwargs)

    monkeypatch.setattr(torch.nn.Module, "to", to)
    expected_module._cache.clear()
    answers = expected_for(problem("linear_relu"), _SmallAccelerator(), QUICK, TORCH_CPU)
    # built on the host, its untouched copy made there, the model moved to the device, then parked
    assert answers.parked and len(moves) == 4
    assert set(pool_seeds(QUICK)) <= set(answers.kept)  # every timed call's answer is kept, with the trials'
    seed = pool_seeds(QUICK)[-1]
    fresh = expected_module.host_model_copy(answers.fresh_model)
    moves.clear()
    kept = answers.outputs(seed)
    assert moves == []  # a timed call is judged with no move of the weights
    with torch.no_grad():
        inputs = expected_module.seeded_inputs(answers.data.module, seed, torch.device("cpu"))
        made_now = torch.relu(fresh.linear(inputs[0]))
    assert torch.equal(kept[0], made_now)
    outputs, _ = answers.call(seed)  # what is not kept (the inputs a candidate changed) brings the model back
    assert moves == ["cpu", "cpu"] and torch.equal(outputs[0], made_now)
    expected_module._cache.clear()


def test_a_large_problem_whose_timing_answers_would_not_fit_keeps_its_model_on_the_device(monkeypatch):
    from kforge_core.harness.worker import expected as expected_module

    monkeypatch.setattr(expected_module, "PARKED_FROM_BYTES", 0)
    # the three trials' answers (32 KiB each) and one timing set's, not the five sets'
    monkeypatch.setattr(expected_module, "KEPT_BYTES", 128 << 10)
    expected_module._cache.clear()
    answers = expected_for(problem("linear_relu"), _SmallAccelerator(), QUICK, TORCH_CPU)
    assert not answers.parked
    expected_module._cache.clear()
    host = expected_for(problem("linear_relu"), CountingDevice(), QUICK, TORCH_CPU)
    assert len(host.kept) == 3 and not host.parked  # on the host CPU there is nowhere else to park it
    expected_module._cache.clear()
