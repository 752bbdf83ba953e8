"""The baseline worker imports what torch.compile needs from its start, in the background; candidates' workers,
which pay for what they import before a candidate that never compiles, do not."""

from __future__ import annotations

import sys

from kforge_core.harness.host.baseline_worker import baseline_modules
from kforge_core.harness.worker.worker import preload_in_background


def test_the_compile_baseline_preloads_dynamo_and_inductor_and_eager_nothing():
    assert baseline_modules(("eager", "compile")) == ("torch._dynamo", "torch._inductor.compile_fx")
    assert baseline_modules(("eager",)) == () and baseline_modules(()) == ()


def test_preloading_imports_in_a_thread_and_a_module_that_fails_is_left_to_fail_where_used():
    sys.modules.pop("colorsys", None)
    thread = preload_in_background(("no_such_module_anywhere", "colorsys"))
    thread.join(30)
    assert not thread.is_alive() and "colorsys" in sys.modules
    assert preload_in_background(()) is None


def test_only_the_baseline_workers_are_told_to_preload_and_only_for_an_accelerator(make_harness):
    from .torch_backend_plugin import TORCH_CPU_ACCELERATOR

    harness = make_harness(baselines=("eager", "compile"), backend=TORCH_CPU_ACCELERATOR)
    assert harness._baseline_worker_init().preload == ("torch._dynamo", "torch._inductor.compile_fx")
    assert harness._worker_init().preload == ()  # the candidates' workers and the referee
    host_cpu = make_harness(baselines=("eager", "compile"))  # a timed run needs the host's cores
    assert host_cpu._baseline_worker_init().preload == ()


def test_dynamo_still_being_imported_by_the_preload_has_compiled_nothing_to_reset(monkeypatch):
    """Moving to a problem resets Dynamo when it compiled something; while the preload thread was still importing
    it, the reset met a partially initialised module and the baseline worker could not get ready."""
    import importlib.machinery
    import types

    from kforge_core.devices.harness_device import _dynamo_compiled

    importing = types.ModuleType("torch._dynamo")
    importing.__spec__ = importlib.machinery.ModuleSpec("torch._dynamo", None)
    importing.__spec__._initializing = True
    monkeypatch.setitem(sys.modules, "torch._dynamo", importing)
    monkeypatch.delitem(sys.modules, "torch._dynamo.convert_frame", raising=False)
    assert not _dynamo_compiled()
    importing.__spec__._initializing = False  # loaded, and its frame counter unknown: it may have compiled
    assert _dynamo_compiled()


def test_a_request_that_may_compile_waits_for_the_preload_and_a_preparation_goes_beside_it():
    """Two threads importing torch's compiler at once saw each other's half-made modules (``KeyError:
    'torch._inductor'`` in the compile baseline)."""
    import threading

    from kforge_core.harness.protocol import Finish, Prepare
    from kforge_core.harness.worker.worker import Worker

    from .helpers import problem

    order: list[str] = []
    release = threading.Event()

    def preload() -> None:
        release.wait(10)
        order.append("preloaded")

    worker = Worker.__new__(Worker)  # its requests, without a process, plugins or a device
    worker.preloading = threading.Thread(target=preload)
    worker.preloading.start()
    worker._dispatch = lambda request: order.append(type(request).__name__)
    worker.handle(Prepare(problem("relu_scale")))
    assert order == ["Prepare"]
    threading.Timer(0.2, release.set).start()
    worker.handle(Finish())
    assert order == ["Prepare", "preloaded", "Finish"] and worker.preloading is None


def test_the_baselines_build_caches_are_their_own_where_no_candidate_can_write(make_harness):
    """A graph or kernel planted where Inductor looks would be the torch.compile baseline's: the baseline workers
    (and the builders, started the same way) keep Inductor's and Triton's caches in KForge's own state, which the
    sandbox hides from every other worker; the candidates' workers keep the shared build caches."""
    from pathlib import Path

    from .torch_backend_plugin import TORCH_CPU_ACCELERATOR

    harness = make_harness(baselines=("eager", "compile"), backend=TORCH_CPU_ACCELERATOR)
    baseline, worker = harness._baseline_worker_init(), harness._worker_init()
    caches = dict(baseline.environment)
    assert Path(caches["TORCHINDUCTOR_CACHE_DIR"]).parent == harness._baseline_caches
    assert Path(caches["TRITON_CACHE_DIR"]).name == "triton" and Path(caches["TRITON_CACHE_DIR"]).is_dir()
    assert "TORCHINDUCTOR_CACHE_DIR" not in dict(worker.environment)
    if worker.sandbox is not None:
        assert worker.sandbox.hides(Path(caches["TORCHINDUCTOR_CACHE_DIR"]))
        assert not baseline.sandbox.hides(Path(caches["TORCHINDUCTOR_CACHE_DIR"]))
        assert str(harness._baseline_caches.resolve()) in baseline.sandbox.writable
