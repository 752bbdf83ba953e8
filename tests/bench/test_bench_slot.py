"""A slot builds the solutions of later problems ahead, each for its own problem, while it evaluates the current
one (a backend whose plugin builds ahead: the prebuild test plugin's)."""

from __future__ import annotations

from harness.helpers import CANDIDATES, PROBLEMS, settings_for
from harness.prebuild_plugin import AHEAD, mark

from kforge_core.bench.results import ProblemJob
from kforge_core.bench.slot import DeviceSlot
from kforge_core.plugins import PluginSelection
from kforge_core.records import Candidate

SELECTION = PluginSelection(entry_points=False, modules=("harness.prebuild_plugin",))


def _slot(cache) -> DeviceSlot:
    return DeviceSlot(backend=AHEAD, settings=settings_for(cache, spare_workers=0, baselines=()), plugins=SELECTION,
                      options=None, device_index=None, label="cpu", measure=False)


def _two_jobs() -> list[ProblemJob]:
    return [ProblemJob(name, PROBLEMS / f"{name}.py", Candidate.from_path(CANDIDATES / f"{solution}.py", label=name))
            for name, solution in (("relu_scale", "relu_scale_numpy"), ("linear_relu", "linear_relu_numpy"))]


def test_later_problems_build_ahead_for_their_own_problem(fresh_cache):
    cache = fresh_cache
    slot, jobs = _slot(cache), _two_jobs()
    try:
        first = slot.evaluate(jobs[0])
        slot.prebuild(jobs[1:])
        second = slot.evaluate(jobs[1])
    finally:
        slot.close()
    assert first.correct and second.correct, (first.message, second.message)
    assert first.verdict["compile"]["log"].startswith("built now")
    assert second.verdict["compile"]["log"].startswith("found built ahead")
    assert first.verdict["built_ahead"] == ""  # the first problem's solution is built by its own worker
    assert second.verdict["built_ahead"].startswith("building ahead took ")  # the verdict says what building ahead did
    assert mark(cache, jobs[1].candidate.digest).with_suffix(".problem").read_text() == "linear_relu"


def test_builds_handed_out_with_the_first_problem_start_once_the_harness_exists(fresh_cache):
    import threading

    slot, jobs = _slot(fresh_cache), _two_jobs()
    ahead = threading.Thread(target=slot.prebuild, args=(jobs[1:],))
    try:
        ahead.start()  # before the first problem made the harness: it waits for it
        first = slot.evaluate(jobs[0])
        ahead.join(30)
        second = slot.evaluate(jobs[1])
    finally:
        slot.close()
    assert not ahead.is_alive()
    assert first.correct and second.correct, (first.message, second.message)
    assert second.verdict["compile"]["log"].startswith("found built ahead")


def test_a_slot_closed_before_its_first_problem_lets_a_waiting_prebuild_return(fresh_cache):
    import threading

    slot = _slot(fresh_cache)
    ahead = threading.Thread(target=slot.prebuild, args=([],))
    ahead.start()
    slot.close()
    ahead.join(10)
    assert not ahead.is_alive()


def test_the_slots_workers_start_before_its_first_problem_is_described_and_serve_it(fresh_cache):
    from kforge_core.bench.slot import ProblemLoader

    started_when_described = []

    class Watching(ProblemLoader):
        def load(self, path):
            started_when_described.append(slot.harness().workers_started)
            return super().load(path)

    slot = DeviceSlot(backend=AHEAD, settings=settings_for(fresh_cache, spare_workers=0, baselines=()),
                      plugins=SELECTION, options=None, device_index=None, label="cpu", loader=Watching(), measure=False)
    try:
        result = slot.evaluate(_two_jobs()[0])
        started = slot.harness().workers_started
    finally:
        slot.close()
    assert result.correct, result.message
    assert started_when_described == [2]  # the referee's worker and the candidate's, before the problem was described
    assert started == 2  # they served it: no other worker was started for it


def test_a_slot_starts_its_workers_before_it_takes_a_problem(fresh_cache):
    """``--devices 0,1``: each device's workers start as its slot's thread begins, side by side, not with the
    slot's first problem."""
    from harness.torch_backend_plugin import TORCH_CPU_UNITS

    settings = settings_for(fresh_cache, spare_workers=0, baselines=())
    units = PluginSelection(entry_points=False, modules=("harness.torch_backend_plugin",))
    slots = [DeviceSlot(backend=TORCH_CPU_UNITS, settings=settings, plugins=units, options=None, device_index=i,
                        label=f"cpu slot {i}", measure=False) for i in (0, 1)]
    try:
        for slot in slots:
            slot.start()
        assert all(slot.harness().workers_started >= 1 for slot in slots)  # with no problem given yet
        assert [slot.harness().device_index for slot in slots] == [0, 1]
    finally:
        for slot in slots:
            slot.close()


class _Builds:
    """A harness as a slot asks it about baseline builds: which problems its builders still build."""

    builds_baselines_ahead = True

    def __init__(self, building=()):
        self.building = set(building)

    def baselines_built(self, problem):
        return problem.name not in self.building


def test_a_slot_asks_every_slot_whether_a_problems_build_is_done(fresh_cache):
    """The slot that took the first problems asked its builders for the suite; the other slot, whose own builders
    know nothing of it, sees a problem they still build as not ready (the executor takes it last)."""
    peers: list[DeviceSlot] = []
    first, second = (DeviceSlot(backend=AHEAD, settings=settings_for(fresh_cache, spare_workers=0), plugins=SELECTION,
                                options=None, device_index=index, label=f"cpu:{index}", peers=peers)
                     for index in (0, 1))
    assert peers == [first, second]
    first._harness, second._harness = _Builds(building={"linear_relu"}), _Builds()
    relu, linear = _two_jobs()
    assert second.baselines_built(relu) and not second.baselines_built(linear)
    assert not first.baselines_built(linear)
    first._harness.building.clear()
    assert second.baselines_built(linear)


class _NeverLoad:
    def ready(self, path):
        return True

    def load(self, path):
        raise AssertionError("a problem was described only to ask about builds no slot has")


def test_without_builders_no_problem_is_loaded_to_ask_whether_its_build_is_done(fresh_cache):
    """On the host CPU no slot builds ahead, and a problem not yet described would be described in KForge's process
    (under the queue's lock) merely to be asked."""
    slot = DeviceSlot(backend=AHEAD, settings=settings_for(fresh_cache, spare_workers=0), plugins=SELECTION,
                      options=None, device_index=None, label="cpu", loader=_NeverLoad())
    relu, _ = _two_jobs()
    assert slot.baselines_built(relu)
    slot._harness = _Builds()
    slot._harness.builds_baselines_ahead = False
    assert slot.baselines_built(relu)
