"""The Harness: evaluates candidates for a problem on one backend (and one unit of its device), in isolated worker
processes; it can move on to another problem and keep its workers warm (``use_problem``)."""

from __future__ import annotations

import dataclasses
import itertools
import os
import shutil
import sys
import time
from pathlib import Path
from typing import Any, Callable, Iterable, Iterator

from ...devices import device_class_of
from ...errors import KForgeError
from ...plugins import PluginSelection, build_plugin_manager
from ...records import Backend, Candidate, Problem, ProfileResult, ProfileSummary
from ...registry import BackendRegistry
from ...settings import Settings
from ..protocol import PrebuildRequest, WorkerInit
from ..verdict import RuntimeStats, Verdict
from .deadline import StageTimeouts
from .candidate_evaluation import EvaluationSetup, evaluate_candidate
from .pool import WorkerPool
from .prebuild import PrebuildOutcome, Prebuilder
from .baseline_cache import BaselineCache
from .cache_quota import cache_watch
from .baseline_builds import BUILT_BASELINES, PAUSED_ALLOWANCE, BaselineBuilds
from .baseline_worker import BaselineWorker, baseline_modules
from ..cpu_placement import choose_placement
from .device_binding import device_environment
from .baselines_window import BaselinesWindow
from .limits import limited_plan
from .namespaces import sandbox_plan, use_sandbox
from .phases import Observer, Phases
from .quiet import QuietForTiming
from .referee import Referee
from .speed_of_light import Bounds
from .scratch_layout import ScratchLayout, confined, for_baselines, for_referee
from .scratch_roots import make_scratch_root
from .verdict_parts import device_ran_out


# the build caches a baseline worker reads and writes, each its own under KForge's state (never the candidates')
BASELINE_CACHE_VARIABLES = (("TORCHINDUCTOR_CACHE_DIR", "inductor"), ("TRITON_CACHE_DIR", "triton"))


def _made(directory: Path) -> Path:
    directory.mkdir(parents=True, exist_ok=True, mode=0o700)
    return directory


def _private_state_dir(settings: Settings, scratch_root: Path | None) -> Path:
    """KForge's own state directory (the baseline cache and its key), made now so that the sandbox hides it from
    the first worker on; a KForgeError when it lies where workers write (a new temporary scratch root cannot
    hold it)."""
    state_dir = settings.host_state_dir.expanduser().resolve()
    writable = [(settings.cache_dir, "the cache directory")]
    if scratch_root is not None:
        writable.append((scratch_root, "the scratch root"))
    for place, what in writable:
        if state_dir.is_relative_to(Path(place).expanduser().resolve()):
            raise KForgeError(f"state_dir {state_dir} lies in {what} ({place}), which workers write",
                              hint="set state_dir to a directory outside it (by default it lies beside the cache "
                                   "directory)")
    state_dir.mkdir(parents=True, exist_ok=True, mode=0o700)
    return state_dir


class Harness:
    """Compiles, verifies, times and profiles candidates in isolated workers; a context manager.

    :param backend: the backend candidates are written for (its plugin's stage hooks run in the workers).
    :param problem: the validated problem; None: none yet (:meth:`use_problem` gives it before anything is
        evaluated), so that :meth:`start_workers` can start the processes while the first problem is described.
    :param settings: all settings; ``settings.harness`` says how candidates are checked and timed.
    :param plugins: which plugins the workers load (the same as this process, so they know the backend).
    :param options: the backend's options; by default, read from ``settings``.
    :param scratch_root: where candidates' scratch directories are made and kept; by default a temporary
        directory removed by :meth:`close`.
    :param device_index: bind the workers to this unit of the backend's device (``cuda`` device 1), through the
        device's ``Device.visible_devices_env``; None uses what the process sees. On the host CPU it only names a slot:
        harnesses with different indices share the CPU.
    :raises KForgeError: when no loaded plugin registered the backend, or it is not available here, or a device
        index is given for a device whose backend cannot select one.
    """

    def __init__(self, *, backend: Backend, problem: Problem | None, settings: Settings,
                 plugins: PluginSelection, options: Any = None, scratch_root: Path | None = None,
                 device_index: int | None = None) -> None:
        self.backend = backend
        self._problem = problem
        self.device_index = device_index
        self._environment = device_environment(backend, device_index)
        self.settings = settings
        self.plugins = plugins
        self.options = settings.backend_options(backend) if options is None else options
        self._loaded = build_plugin_manager(plugins)
        registry = BackendRegistry(self._loaded)
        registry.get(backend.name)  # unknown backend: the user's mistake, said now
        self._hooks = registry.hooks(backend.name)
        self._source_checks = self._hooks.collect("source_checks", backend=backend)
        availability = registry.availability(backend.name, self.options)
        if not availability.available:
            raise KForgeError(f"backend {backend.name!r} is not available here: {availability.reason}")
        try:
            self._device_class = device_class_of(backend)
        except ValueError as exc:
            raise KForgeError(str(exc)) from None
        self._host_cpu = self._device_class.host_cpu
        # an accelerator's workers on one node, timing on one CPU of it (the host CPU's timed work takes all cores)
        self._placement = None if self._host_cpu or not settings.harness.cpu_placement else choose_placement()
        self._own_root = scratch_root is None
        state_dir = _private_state_dir(settings, scratch_root)
        # what the baselines' torch.compile builds keep (Inductor's and Triton's caches): in KForge's own state,
        # where no candidate's worker can write (a graph planted in a cache candidates write would be the baseline's)
        self._baseline_caches = _made(state_dir / "baseline-builds")
        # absolute: a worker is told its candidates' directories, and its own working directory is not this one's
        self.root = make_scratch_root() if scratch_root is None \
            else Path(scratch_root).absolute()
        self.root.mkdir(parents=True, exist_ok=True)
        self._layout = ScratchLayout(self.root).make()
        self._sandbox = confined(sandbox_plan(
            scratch_root=self.root.resolve(), cache_dir=settings.cache_dir.resolve(),
            runs_dir=settings.runs_dir.resolve(), sys_path=self._sys_path(),
        ), self._layout, private=(state_dir,)) if use_sandbox(settings.harness.sandbox) else None
        self._caches = cache_watch(settings.cache_dir, dict(os.environ), settings.harness.cache_quota_mb)
        self._pool = WorkerPool(self._worker_init, self._layout.workers, settings.harness,
                                self._seen_by_workers(problem) if problem is not None else None)
        self._prebuilder = Prebuilder(
            self._prebuild_request, self._layout.prebuilds, settings.harness, host_cpu=self._host_cpu,
            cache_dir=settings.cache_dir.resolve(), enabled=self._hooks.builds_ahead,
        )
        self.builds_ahead = self._hooks.builds_ahead and settings.harness.prebuild_jobs > 0  # prebuild() builds
        self._numbers = itertools.count(1)  # the candidates' scratch directories, in order
        # judges shipped outputs: never runs candidate code
        self._referee = Referee(self._pool, settings.harness, self._layout.workers, self._referee_init)
        # the baselines: their worker, a second one building the next problem's while this one is evaluated
        # (expect_problem; swapped in by use_problem), the priors and the baseline cache
        self._baselines = BaselinesWindow(
            settings.harness, self._device_class, BaselineWorker(self._baseline_worker_init, self._layout.workers),
            BaselineWorker(self._baseline_worker_init, self._layout.workers_ahead),
            BaselineCache(state_dir / "baselines"), self._pool.device_facts, self._baseline_builds())
        self._quiet = QuietForTiming(self._pool, self._prebuilder, self._builds_beside_timing, self._baselines)
        self._prebuild_problems: dict[str, Problem] = {}  # candidate digest -> the problem it is built for
        self._bounds = Bounds(settings.harness.contract)
        self._closed = False

    # ------------------------------------------------------------------------------------------ public

    @property
    def problem(self) -> Problem:
        """The problem candidates are evaluated for."""
        if self._problem is None:
            raise KForgeError("this Harness has no problem yet: give it one with use_problem")
        return self._problem

    def start_workers(self, *, baselines: bool = True) -> None:
        """Start the processes an evaluation needs now, without waiting for them: the referee's worker, a
        candidate's worker and, with ``baselines`` (where the settings measure any), the baseline worker. Each
        loads its runtime and starts the device while the caller does something else (a bench describes its first
        problem, which takes seconds, and its workers would otherwise start only after it)."""
        self._check_open()
        self._referee.start()
        self._pool.start_ahead()
        if baselines:
            self._baselines.start()

    def use_problem(self, problem: Problem) -> None:
        """Evaluate candidates for ``problem`` from now on. Warm workers take it (they compute its reference
        before serving a candidate for it); its baselines are measured anew, or read from the baseline cache."""
        self._check_open()
        if self._problem is not None and problem.digest == self._problem.digest:
            return
        self._problem = problem
        self._pool.move_to(self._seen_by_workers(problem))
        self._baselines.move_to(problem)
        if self._baselines.builds is not None:
            self._baselines.builds.hurry(problem.digest)  # a copy for workers has the same digest

    def expect_problem(self, problem: Problem | None) -> None:
        """``problem`` is the next one :meth:`use_problem` will be given: spare workers prepare for it while the
        current one is evaluated, and so, where builds may go on beside timed runs (``prebuild_during_timing``,
        never on the host CPU), does a second baseline worker, which builds its baselines (``torch.compile``
        included) and takes over when the harness moves on to it. Nothing is prepared ahead when either problem is
        large for the device (``problem_size``)."""
        self._check_open()
        if problem is not None and (self._pool.large(self.problem) or self._pool.large(problem)):
            problem = None  # a large problem for the device is evaluated with nothing prepared beside it
        seen = self._seen_by_workers(problem) if problem is not None else None
        self._pool.expect(seen)
        if seen is not None and self.settings.harness.baselines and self._builds_beside_timing:
            self.build_baselines_ahead([problem])
            self._baselines.expect(seen)

    @property
    def builds_baselines_ahead(self) -> bool:
        """Whether builders build the ``torch.compile`` baselines of problems told of ahead (``baseline_builders``)."""
        return self._baselines.builds is not None

    def baselines_built(self, problem: Problem) -> bool:
        """Whether ``problem``'s baselines need no build still under way by the builders (built, failed, or never
        asked for): a suite evaluates such problems first."""
        builds = self._baselines.builds
        return builds is None or builds.done(problem.digest)

    def wait_for_baseline_builds(self, problem: Problem, stop_at: float | None = None) -> None:
        """Wait until the builders are done with ``problem``'s baselines (at most their limit, and not past
        ``stop_at``, a ``time.monotonic()`` time): a suite with nothing else to evaluate meanwhile."""
        builds = self._baselines.builds
        if builds is None:
            return
        limit = (self.settings.harness.startup_timeout_s + self.settings.harness.compile_timeout_s) * PAUSED_ALLOWANCE
        if stop_at is not None:
            limit = max(0.0, min(limit, stop_at - time.monotonic()))
        builds.wait(problem.digest, limit)

    def build_baselines_ahead(self, problems: Iterable[Problem]) -> None:
        """``problems`` come later in this harness's suite: their ``torch.compile`` baselines are built now, side
        by side, by the builders (``harness.baseline_builders``; ``baseline_builds.py``), where there are any and
        the problem is not large for the device (evaluated with nothing beside it, it builds its own in its
        turn). A candidate of such a problem timed before its build is done is timed without that baseline."""
        self._check_open()
        builds = self._baselines.builds
        if builds is None:
            return
        for problem in problems:
            if not self._pool.large(problem):
                builds.request(self._seen_by_workers(problem))

    def evaluate(self, candidate: Candidate, *, profile: bool = False, measure: bool = True,
                 stop_at: float | None = None, observer: Observer | None = None) -> Verdict:
        """Compile, verify and (with ``measure``) time ``candidate``; profile it when asked and it is correct.
        With ``stop_at`` (a ``time.monotonic()`` time: a problem's budget), a stage still running then is ended
        as a timeout. ``observer`` is told each phase as it begins, each trial as it is judged and each block of
        timed runs as it begins (:class:`EvaluationStep`), in this thread.

        Never raises for anything the candidate does: every fault is a Verdict with a Failure. A candidate that ran
        out of the device's memory beside KForge's other processes is evaluated again with the device to itself.
        """
        self._check_open()
        phases = Phases(observer)
        verdict = evaluate_candidate(self._setup(), candidate, profile=profile, measure=measure, stop_at=stop_at,
                                     phases=phases)
        said = device_ran_out(verdict, self._device_class.out_of_memory_patterns)
        if said and self._give_device_alone(self.problem):
            again = evaluate_candidate(self._setup(), candidate, profile=profile, measure=measure, stop_at=stop_at,
                                       phases=phases)
            return dataclasses.replace(again, device_alone=(
                f"out of memory beside KForge's other processes ({said[:200]}); evaluated again with the device "
                "to itself"))
        return verdict

    def _give_device_alone(self, problem: Problem) -> bool:
        """A candidate ran out of memory while KForge's other processes held theirs: the referee, the baseline
        workers and the spares. From now on ``problem`` is evaluated as one large for its device (one process at
        a time, nothing prepared beside it, the referee's expected outputs in host memory), and the processes
        holding device memory now are ended (each starts again when needed). False where it was so already: the
        candidate ran out of memory alone, its own failure."""
        if problem.digest in self._pool.alone:
            return False
        self._pool.alone.add(problem.digest)
        self._referee.hosted.add(problem.digest)
        self._referee.discard()
        self._baselines.discard()
        self._pool.close()
        return True

    def evaluate_all(self, candidates: Iterable[Candidate], *, profile: bool = False, measure: bool = True,
                     observer: Callable[[Candidate], Observer | None] = lambda candidate: None) -> Iterator[Verdict]:
        """Evaluate ``candidates`` in order, building the later ones ahead while the earlier ones are timed;
        ``observer(candidate)`` gives each evaluation's observer (see :meth:`evaluate`)."""
        queue = list(candidates)
        self.prebuild(queue[1:])  # the first one's worker builds it at once
        for candidate in queue:
            yield self.evaluate(candidate, profile=profile, measure=measure, observer=observer(candidate))

    def prebuild(self, candidates: Iterable[Candidate], problem: Problem | None = None) -> None:
        """Start building ``candidates`` (for ``problem``, by default the current one) ahead, in child processes,
        when the backend's plugin can (see ``kforge_prebuild``); a later :meth:`evaluate` of one of them waits for
        its build and finds it cached."""
        self._check_open()
        queued = list(candidates)
        for candidate in queued:
            self._prebuild_problems.setdefault(candidate.digest, problem or self.problem)
        self._prebuilder.start(queued)

    @property
    def prebuilds(self) -> list[PrebuildOutcome]:
        """What building ahead did so far, one record per finished build."""
        return list(self._prebuilder.outcomes)

    def baselines(self) -> dict[str, RuntimeStats]:
        """The baselines' runtimes for the current problem (the headline timer's), measured in a worker of their
        own like candidates, a prior from the baseline cache (``harness.baseline_cache``) confirmed by a short
        measurement; every candidate's verdict has its baselines measured again beside it."""
        self._check_open()
        if self._baselines.results is None and self.settings.harness.baselines:  # measured in a window of their own
            seen = self._seen_by_workers(self.problem)
            self._baselines.get_ready(seen)
            self._baselines.measure(seen, self.timeouts, Phases())
        return self._baselines.runtimes()

    @property
    def timeouts(self) -> StageTimeouts:
        """The limits of a candidate's stages, derived from the settings and the reference's time on the device
        (measured by the first worker; starts one when none has started yet)."""
        self._referee.ready()
        variants = len(self.problem.shapes.variants) if self.settings.harness.shapes != "off" else 0
        return StageTimeouts.derive(self.settings.harness, self._referee.reference_s or 0.0, variants)

    @property
    def baseline_errors(self) -> dict[str, str]:
        """Why a baseline could not be measured (``torch.compile`` failing, for one)."""
        results = self._baselines.results
        return dict(results.errors) if results is not None else {}

    @property
    def baseline_notes(self) -> dict[str, str]:
        """Where each baseline's figure came from, and when it was measured."""
        results = self._baselines.results
        return dict(results.notes) if results is not None else {}

    def summarize(self, profile: ProfileResult) -> ProfileSummary:
        """The backend's summary of a profile, made in this process (no candidate code runs)."""
        summary = self._hooks.caller("summarize_profile")(backend=self.backend, problem=self.problem,
                                                          profile=profile)
        if summary is None:
            raise KForgeError(f"no plugin summarizes profiles of tool {profile.tool!r} for backend "
                              f"{self.backend.name!r}")
        return summary

    def close(self) -> None:
        if self._closed:
            return
        self._closed = True
        self._prebuilder.close()
        self._referee.close()
        self._baselines.close()
        self._pool.close()
        if self._placement is not None:
            self._placement.release()
        if self._own_root:
            shutil.rmtree(self.root, ignore_errors=True)

    def __enter__(self) -> Harness:
        return self

    def __exit__(self, *exc_info: object) -> None:
        self.close()

    # ------------------------------------------------------------------------------------------ inside

    @property
    def workers_started(self) -> int:
        """How many worker processes this Harness has started (spares included)."""
        return self._pool.started

    def _worker_init(self, problem: Problem | None = None) -> WorkerInit:
        # the workers import what this process can import: the selected plugin modules must be found there too
        sandbox = self._sandbox
        if sandbox is not None:  # its scratch space follows the problem (the current one, by default)
            sandbox = limited_plan(sandbox, self.settings.harness, problem or self._problem)
        return WorkerInit(
            sys_path=self._sys_path(),
            selection=self.plugins, backend=self.backend.name, host_cpu=self._host_cpu, options=self.options,
            settings=self.settings.harness, cache_dir=self.settings.cache_dir.resolve(),
            environment=self._environment, sandbox=sandbox,
            placement=self._placement.placement if self._placement is not None else None,
        )

    def _baseline_worker_init(self) -> WorkerInit:
        """A worker's, with what the baselines import loaded from its start (``torch.compile``'s Dynamo and
        Inductor), while the first candidate is verified; not on the host CPU, whose cores a timed run needs (and
        where seconds of imports beside the candidate's evaluation cost more than they save)."""
        preload = () if self._host_cpu else baseline_modules(self.settings.harness.baselines)
        init = self._worker_init()
        caches = tuple((name, str(_made(self._baseline_caches / kind))) for name, kind in BASELINE_CACHE_VARIABLES)
        return dataclasses.replace(
            init, preload=preload, environment=(*init.environment, *caches),
            sandbox=for_baselines(init.sandbox, self._baseline_caches) if init.sandbox is not None else None)

    def _referee_init(self) -> WorkerInit:
        """A worker's, with the workers' homes writable in the sandbox: the referee removes the files it read."""
        init = self._worker_init()
        if init.sandbox is None:
            return init
        return dataclasses.replace(init, sandbox=for_referee(init.sandbox, self._layout))

    @staticmethod
    def _sys_path() -> tuple[str, ...]:
        return tuple(str(Path(p).resolve()) for p in sys.path if p and Path(p).is_dir())

    def _prebuild_request(self, candidate: Candidate) -> PrebuildRequest:
        problem = self._prebuild_problems.get(candidate.digest) or self.problem
        return PrebuildRequest(self._worker_init(problem), self._seen_by_workers(problem), candidate)

    def _seen_by_workers(self, problem: Problem) -> Problem:
        """``problem`` as workers find it: in the sandbox, a file under a hidden directory (the home directory,
        /tmp) is read from a copy of its validated source in the scratch root, which workers see and cannot
        change (``scratch_layout``)."""
        if self._sandbox is None or not self._sandbox.hides(problem.path):
            return problem
        return dataclasses.replace(problem, path=self._layout.problem_copy(problem).resolve())

    def _baseline_builds(self) -> BaselineBuilds | None:
        """The builders of coming problems' ``torch.compile`` baselines: on an accelerator where builds may go on
        beside timed runs and a baseline needs a build; none on the host CPU."""
        settings = self.settings.harness
        names = tuple(name for name in settings.baselines if name in BUILT_BASELINES)
        if not names or not settings.baseline_builders or not self._builds_beside_timing:
            return None
        return BaselineBuilds(
            lambda number: BaselineWorker(self._baseline_worker_init, self._layout.workers_ahead,
                                          name=f"builder-{number}"),
            settings.baseline_builders, names, settings.startup_timeout_s + settings.compile_timeout_s)

    @property
    def _builds_beside_timing(self) -> bool:
        """Whether builds (candidates' ahead, the next problem's baselines) may run beside a timed run: on an
        accelerator with ``prebuild_during_timing`` on, never on the host CPU, whose cores the timed run needs."""
        return self.settings.harness.prebuild_during_timing and not self._host_cpu

    def _setup(self) -> EvaluationSetup:
        """What evaluating a candidate of the current problem uses of this Harness."""
        return EvaluationSetup(
            backend=self.backend, problem=self.problem, seen=self._seen_by_workers(self.problem),
            settings=self.settings.harness, source_checks=self._source_checks, prebuilder=self._prebuilder,
            referee=self._referee, workers=self._pool, baselines=self._baselines, quiet=self._quiet,
            bounds=self._bounds, statistic=self._device_class.headline_statistic, numbers=self._numbers,
            kept_under=None if self._own_root else self._layout.workers, caches=self._caches,
        )

    def _check_open(self) -> None:
        if self._closed:
            raise KForgeError("this Harness is closed")

