"""Building candidates ahead: while the device times one candidate, the candidates after it build on the CPU cores.

Each build calls the backend's ``kforge_prebuild`` in a child process of its own (``prebuild_child``), contained
like a worker (an environment without secrets, resource limits, a session of its own, killed at the compile
timeout) and at a lower scheduling priority. At most ``harness.prebuild_jobs`` run at once; while the harness
holds them (a timed run they would disturb) none runs. A build only fills the backend's build cache: the candidate's
verdict still comes from its compile stage in a worker, which then finds its builds done.

A child writes its own directory: the KForge process writes the request there before the child starts and reads
the answer back with no link followed (``safe_files``); the child's output goes to files with no name.
"""

from __future__ import annotations

import contextlib
import itertools
import json
import os
import pickle
import signal
import subprocess
import sys
import tempfile
import threading
import time
from concurrent.futures import Future, ThreadPoolExecutor
from dataclasses import dataclass
from pathlib import Path
from typing import Callable, Iterable, Iterator

from ...codec import record_from_json
from ...records import Candidate, CompileResult
from ...settings import HarnessSettings
from ..captured import read_truncated, tail_lines
from ..protocol import REQUEST_FILE, RESULT_FILE, PrebuildRequest
from ..safe_files import create_beneath, read_beneath
from .cgroups import WorkerCgroup, worker_cgroup
from .namespaces import sandboxed_command
from .sandbox import limits_setter, worker_environment

_BUILD_NICENESS = 10  # builds are background work: the timed runs and the KForge process come first
_ANSWER_BYTES = 64 << 20  # the most of a child's answer that is read (a build log is cut far below that)


@dataclass(frozen=True)
class PrebuildOutcome:
    """What building one candidate ahead did.

    :param digest: the candidate's digest.
    :param seconds: wall time of the child process.
    :param result: the hook's answer; None when no plugin builds ahead for the backend, or the child failed.
    :param error: why the child failed (timeout, crash), else empty.
    """

    digest: str
    seconds: float
    result: CompileResult | None = None
    error: str = ""

    def describe(self) -> str:
        """One line for the verdict: how long building ahead took (or that all was cached) with the first line of
        the plugin's log (what it built, or that it found nothing to build), failing, or why the build process
        failed."""
        if self.error:
            return f"the build ahead failed after {self.seconds:.1f} s: {self.error.splitlines()[0]}"
        if self.result is None:
            return ""
        done = "found in the build cache" if self.result.cached else f"building ahead took {self.seconds:.1f} s"
        first = (self.result.log.strip().splitlines() or [""])[0][:200]
        if self.result.ok:
            return f"{done}: {first}" if first else done
        return f"{done}, failing: {first}" if first else f"{done}, failing"


class Prebuilder:
    """Runs ``kforge_prebuild`` for queued candidates, ``jobs`` at a time, in child processes.

    :param make_request: the child's request for a candidate.
    :param root: where each build gets its directory (request, the candidate's files, captured output).
    :param settings: the harness settings (``prebuild_jobs``, ``compile_timeout_s``, limits).
    :param host_cpu: whether the backend's device is the host CPU (``Device.host_cpu``), for the resource limits.
    :param cache_dir: the persistent cache the builds fill.
    :param enabled: False when no plugin implements ``kforge_prebuild``: nothing is started.
    """

    def __init__(self, make_request: Callable[[Candidate], PrebuildRequest], root: Path, settings: HarnessSettings,
                 *, host_cpu: bool, cache_dir: Path, enabled: bool) -> None:
        self._make_request = make_request
        self._root = root
        self._settings = settings
        self._host_cpu = host_cpu
        self._cache_dir = cache_dir
        self._futures: dict[str, Future[PrebuildOutcome | None]] = {}
        self._running: set[subprocess.Popen[bytes]] = set()
        self._lock = threading.Lock()
        self._changed = threading.Condition(self._lock)  # a build started or ended, or a hold began or ended
        self._holds = 0  # while > 0 no build starts (see held)
        self._numbers = itertools.count(1)
        self._nothing_to_build = False  # the backend's plugin answered None: stop starting children
        jobs = settings.prebuild_jobs if enabled else 0
        self._executor = ThreadPoolExecutor(jobs, thread_name_prefix="kforge-prebuild") if jobs else None
        self.outcomes: list[PrebuildOutcome] = []

    def start(self, candidates: Iterable[Candidate]) -> None:
        """Queue ``candidates`` for building ahead (each digest once)."""
        if self._executor is None:
            return
        for candidate in candidates:
            if candidate.digest not in self._futures and not self._nothing_to_build:
                self._futures[candidate.digest] = self._executor.submit(self._build, candidate)

    def wait(self, candidate: Candidate) -> PrebuildOutcome | None:
        """Before ``candidate`` is compiled: drop its build if it has not started, else wait for it to finish."""
        future = self._futures.pop(candidate.digest, None)
        if future is None or future.cancel():
            return None
        return future.result()

    @contextlib.contextmanager
    def held(self) -> Iterator[None]:
        """Within the block no build runs: running ones are waited for, queued ones start after it (for timed
        runs that builds would disturb)."""
        with self._changed:
            self._holds += 1
            while self._running:
                self._changed.wait()
        try:
            yield
        finally:
            with self._changed:
                self._holds -= 1
                self._changed.notify_all()

    def close(self) -> None:
        """Drop queued builds and kill running ones."""
        if self._executor is None:
            return
        for future in self._futures.values():
            future.cancel()
        with self._changed:
            self._nothing_to_build = True
            for process in self._running:
                _kill_group(process)
            self._changed.notify_all()
        self._executor.shutdown(wait=True)
        self._futures.clear()

    # ------------------------------------------------------------------------------------------ in a thread

    def _build(self, candidate: Candidate) -> PrebuildOutcome | None:
        if self._nothing_to_build:
            return None
        name = f"{next(self._numbers):04d}-{candidate.digest[:8]}"
        directory = self._root / name
        self._root.mkdir(parents=True, exist_ok=True)
        directory.mkdir()  # a new directory: nothing made beforehand is taken for it
        request = self._make_request(candidate)
        with create_beneath(self._root, f"{name}/{REQUEST_FILE}") as out:
            out.write(pickle.dumps(request))
        start = time.perf_counter()
        env = worker_environment(os.environ, self._cache_dir, request.init.environment,
                                 compile_threads=request.init.settings.compile_threads)
        with tempfile.TemporaryFile() as out, tempfile.TemporaryFile() as err:
            with self._changed:
                while self._holds and not self._nothing_to_build:
                    self._changed.wait()
                if self._nothing_to_build:
                    return None
                command = [sys.executable, "-m", "kforge_core.harness.worker.prebuild_child", str(directory)]
                if request.init.sandbox is not None:
                    command = sandboxed_command(request.init.sandbox, command, env, directory)
                cgroup = self._cgroup()
                try:
                    process = subprocess.Popen(
                        command,
                        cwd=directory, env=env, stdin=subprocess.DEVNULL, stdout=out, stderr=err,
                        start_new_session=True, preexec_fn=_background(self._limits(request, cgroup)),
                    )
                except BaseException:
                    if cgroup is not None:
                        cgroup.end()
                    raise
                self._running.add(process)
            try:
                process.wait(timeout=self._settings.compile_timeout_s)
                error = "" if process.returncode == 0 else f"the build process exited with {process.returncode}"
            except subprocess.TimeoutExpired:
                _kill_group(process)
                process.wait()
                error = f"the build process ran past the compile timeout ({self._settings.compile_timeout_s:g} s)"
            finally:
                if cgroup is not None:
                    cgroup.end()
                with self._changed:
                    self._running.discard(process)
                    self._changed.notify_all()
            stderr = read_truncated(err.fileno(), 64 * 1024) if error else ""
        outcome = self._outcome(candidate, name, time.perf_counter() - start, error, stderr)
        with self._lock:
            self.outcomes.append(outcome)
        return outcome

    def _cgroup(self) -> WorkerCgroup | None:
        settings = self._settings
        return worker_cgroup(cgroups=settings.cgroups, memory_limit_mb=settings.memory_limit_mb,
                             max_processes=settings.max_processes)

    def _limits(self, request: PrebuildRequest, cgroup: WorkerCgroup | None) -> Callable[[], None]:
        """A worker's limits (in the sandbox the launcher limits its processes inside the namespace)."""
        settings = self._settings
        return limits_setter(memory_limit_mb=settings.memory_limit_mb, file_size_limit_mb=settings.file_size_limit_mb,
                             host_cpu=self._host_cpu, then=cgroup.join if cgroup is not None else None,
                             max_processes=settings.max_processes if request.init.sandbox is None else 0)

    def _outcome(self, candidate: Candidate, name: str, seconds: float, error: str,
                 stderr: str) -> PrebuildOutcome:
        if error:
            return PrebuildOutcome(candidate.digest, seconds, error=f"{error}\n{tail_lines(stderr, 8)}".strip())
        try:
            answer = json.loads(read_beneath(self._root, f"{name}/{RESULT_FILE}", _ANSWER_BYTES))
            if not answer["answered"]:
                self._nothing_to_build = True
                return PrebuildOutcome(candidate.digest, seconds)
            result = record_from_json(CompileResult, answer["result"])
        except (OSError, ValueError, KeyError, TypeError) as exc:
            return PrebuildOutcome(candidate.digest, seconds, error=f"the build process gave no answer: {exc}")
        return PrebuildOutcome(candidate.digest, seconds, result=result)


def _background(set_limits: Callable[[], None]) -> Callable[[], None]:
    """The build's ``preexec_fn``: the worker's limits, at a lower scheduling priority than the timed runs."""

    def set_up() -> None:
        set_limits()
        os.nice(_BUILD_NICENESS)

    return set_up


def _kill_group(process: subprocess.Popen[bytes]) -> None:
    try:
        os.killpg(process.pid, signal.SIGKILL)
    except (ProcessLookupError, PermissionError):
        pass
