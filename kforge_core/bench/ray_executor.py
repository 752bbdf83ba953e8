"""``--executor ray``: problems go to a Ray cluster as tasks of actors, one actor per GPU where the backend has
devices (Ray gives each one GPU and shows it only that one), one per node for the host CPU. Each actor holds a
slot, so its workers stay warm from one problem to the next; Ray's ``ActorPool`` hands each free actor the next
problem. Results come back to this process, which keeps them in the run store.

Ray is an extra: ``pip install 'kforge-core[ray]'``.
"""

from __future__ import annotations

import os
import threading
from dataclasses import dataclass
from typing import Any, Callable

from ..app import App
from ..devices import device_class_of
from ..errors import KForgeError
from ..plugins import PLUGINS_ENV, PluginSelection
from ..records import Backend
from ..settings import Settings
from .results import ProblemJob, ProblemResult
from .slot import DeviceSlot


@dataclass(frozen=True)
class SlotSpec:
    """What an actor needs to make its slot (sent to the cluster, so plain data)."""

    backend: Backend
    settings: Settings
    plugins: PluginSelection
    options: Any
    bench_id: str
    llm: bool  # run the agent loop (--llm) rather than evaluate solutions
    measure: bool = True  # False: correctness only


class SlotActor:
    """A slot on a Ray worker: the device Ray gave it, its harness, its problems one at a time."""

    def __init__(self, spec: SlotSpec) -> None:
        import ray

        self.spec = spec
        node = ray.util.get_node_ip_address()
        gpus = [str(g) for g in ray.get_gpu_ids()]
        label = f"ray {node} gpu {','.join(gpus)}" if gpus else f"ray {node} {spec.backend.device}"
        self.slot = DeviceSlot(backend=spec.backend, settings=spec.settings, plugins=spec.plugins,
                               options=spec.options, device_index=None, label=label, measure=spec.measure)

    def evaluate(self, job: ProblemJob) -> ProblemResult:
        if not self.spec.llm:
            return self.slot.evaluate(job)
        from rich.console import Console

        from .agent import run_agent

        app = App(load_plugins=self.spec.plugins.entry_points, plugin_modules=self.spec.plugins.modules)
        return run_agent(self.slot, job, app=app, settings=self.spec.settings, bench_id=self.spec.bench_id,
                         console=Console(highlight=False, soft_wrap=True, stderr=True), lock=threading.Lock())

    def close(self) -> None:
        self.slot.close()


class RayExecutor:
    """Runs jobs on a Ray cluster: ``address`` (``ray://...``, ``HOST:PORT`` or ``auto``), or a local cluster
    started for the bench when None. A process already connected to Ray uses that connection."""

    def __init__(self, spec: SlotSpec, address: str | None) -> None:
        self.spec = spec
        self.address = address

    def run(self, jobs: list[ProblemJob], on_result: Callable[[ProblemResult], None],
            halt: threading.Event | None = None) -> None:
        """Evaluate ``jobs`` on the cluster's actors; once ``halt`` is set, the problems in hand finish and no
        other starts."""
        ray = _import_ray()
        from ray.util import ActorPool

        connected_here = not ray.is_initialized()
        if connected_here:
            env = {PLUGINS_ENV: os.environ[PLUGINS_ENV]} if PLUGINS_ENV in os.environ else {}
            ray.init(address=self.address, runtime_env={"env_vars": env} if env else None,
                     include_dashboard=False, log_to_driver=True)
        actors = []
        try:
            uses_gpus = not device_class_of(self.spec.backend).host_cpu
            count = self._actor_count(ray, uses_gpus)
            actor_class = ray.remote(num_gpus=1 if uses_gpus else 0, num_cpus=0 if uses_gpus else 1)(SlotActor)
            actors = [actor_class.remote(self.spec) for _ in range(min(count, len(jobs)))]
            feed(ActorPool(actors), jobs, len(actors), on_result, halt or threading.Event())
        except ray.exceptions.RayError as exc:
            raise KForgeError(f"the Ray cluster failed the bench: {exc}",
                              hint="finished problems are kept: `kforge bench --resume BENCH_ID` continues") from None
        finally:
            for actor in actors:
                try:
                    ray.get(actor.close.remote(), timeout=60)
                except Exception:  # noqa: BLE001 - an actor already gone has nothing to close
                    pass
            if connected_here:
                ray.shutdown()

    def _actor_count(self, ray: Any, uses_gpus: bool) -> int:
        if uses_gpus:
            gpus = int(ray.cluster_resources().get("GPU", 0))
            if gpus < 1:
                raise KForgeError(f"the Ray cluster has no GPU; backend {self.spec.backend.name!r} needs one per task")
            return gpus
        return max(1, sum(1 for node in ray.nodes() if node.get("Alive")))


def feed(pool: Any, jobs: list[ProblemJob], slots: int, on_result: Callable[[ProblemResult], None],
         halt: threading.Event) -> None:
    """Give each of ``slots`` actors of ``pool`` (a ``ray.util.ActorPool``) one job, then one more per result that
    comes back, until ``halt`` is set: jobs are never queued on the cluster ahead of a free actor, so a stop
    leaves only the problems in hand to finish."""
    waiting = list(jobs)

    def submit_next() -> None:
        if waiting and not halt.is_set():
            pool.submit(lambda actor, job: actor.evaluate.remote(job), waiting.pop(0))

    for _ in range(slots):
        submit_next()
    while pool.has_next():
        on_result(pool.get_next_unordered())
        submit_next()


def _import_ray() -> Any:
    try:
        import ray
    except ImportError:
        raise KForgeError("--executor ray needs Ray", hint="pip install 'kforge-core[ray]'") from None
    return ray
