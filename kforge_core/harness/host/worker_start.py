"""How a worker process starts (``harness.worker_start``): executed as a new interpreter, or forked from a template
process that imported torch and the worker's modules once (:mod:`kforge_core.harness.worker.template`).

A new interpreter spends about two seconds of CPU time importing torch before it serves anything; a fork of the
template starts in milliseconds and is then the same worker, in the same conditions: the same descriptors, an
environment without secrets, a session of its own, the same limits and cgroup and, where workers are sandboxed, the
same namespaces, entered before any candidate code runs. ``auto`` forks on Linux and executes elsewhere (a fork of
a process that loaded a GPU framework is not safe on macOS); a template that cannot start is said once, and workers
are executed instead.

One template serves every worker whose environment agrees with its own in what is read as the interpreter starts
and torch is imported (``WorkerStart.template_key``); each worker's environment is set in its copy before anything
else reads it. The KForge process keeps a few templates and ends them when it exits.
"""

from __future__ import annotations

import atexit
import functools
import json
import logging
import os
import socket
import subprocess
import sys
import tempfile
import threading
from dataclasses import dataclass
from pathlib import Path
from typing import Callable, Literal, Mapping, Protocol

from ..process_limits import WorkerLimits
from ..protocol import WORKER_FD_ROLES as ROLES, worker_arguments
from .namespaces import CACHE_VARIABLES, launcher_command

log = logging.getLogger("kforge")

# what can change how the interpreter starts and what importing torch and NumPy does (their threads, allocators,
# libraries, logging): the variables a template and the workers it forks must share. A worker's other variables
# (and the ones its device's binding sets, ``WorkerInit.environment``, which a template's key includes) are its own,
# set in its copy before anything reads them
_IMPORT_PREFIXES = ("PYTHON", "LD_", "LC_", "LANG", "TORCH", "PYTORCH", "OMP_", "GOMP_", "KMP_", "MKL_", "OPENBLAS_",
                    "NPY_", "NUMPY_", "MALLOC_")
# read when a build happens, not when torch is imported
_LAZY_VARIABLES = frozenset({*CACHE_VARIABLES, "TORCHINDUCTOR_COMPILE_THREADS"})
MOST_TEMPLATES = 2
_WORKER_MODULE = "kforge_core.harness.worker"
_TEMPLATE_MODULE = "kforge_core.harness.worker.template"


@dataclass(frozen=True)
class WorkerStart:
    """What a new worker starts with: its descriptors by role (:data:`ROLES`: the private pipe's ends, the lifeline,
    a candidate's output files, the stack file, and ``own``, its 1 and 2), its environment and directory, the
    launcher's plan where it is sandboxed (``namespaces.launcher_plan``), its limits and the ``cgroup.procs`` files
    of its cgroup."""

    fds: Mapping[str, int]
    env: Mapping[str, str]
    home: Path
    plan: dict | None
    limits: WorkerLimits
    cgroup_procs: tuple[str, ...] = ()
    bound: tuple[str, ...] = ()  # the variables its device's binding set

    def template_key(self) -> tuple:
        """What a template that forks this worker must have been started with: the variables read at import."""
        return tuple(sorted((name, value) for name, value in self.env.items()
                            if (name.startswith(_IMPORT_PREFIXES) or name in self.bound)
                            and name not in _LAZY_VARIABLES))


class StartedWorker(Protocol):
    """A started worker process, as the KForge process follows it: ``returncode`` None while it runs (negative: the
    signal it died of), ``max_rss_kb`` its peak memory once reaped."""

    pid: int
    returncode: int | None
    max_rss_kb: int

    def poll(self) -> int | None: ...

    def reap(self) -> bool:
        """Whether it has ended (its exit status read now or before), without waiting."""
        ...


class ExecutedWorker:
    """A worker executed as a new interpreter: a child of this process."""

    def __init__(self, start: WorkerStart, joins_cgroup: Callable[[], None] | None) -> None:
        command = [sys.executable, "-m", _WORKER_MODULE, *worker_arguments(start.fds)]
        if start.plan is not None:
            command = launcher_command(start.plan, command)

        def before_exec() -> None:
            start.limits.apply()
            if joins_cgroup is not None:
                joins_cgroup()

        own = start.fds["own"]
        passed = tuple(start.fds[role] for role in ROLES if role != "own")
        self._popen = subprocess.Popen(command, cwd=start.home, env=dict(start.env), stdin=subprocess.DEVNULL,
                                       stdout=own, stderr=own, pass_fds=passed, start_new_session=True,
                                       preexec_fn=before_exec)
        self.pid = self._popen.pid
        self.max_rss_kb = 0

    @property
    def returncode(self) -> int | None:
        return self._popen.returncode

    def poll(self) -> int | None:
        return self._popen.poll()

    def reap(self) -> bool:
        if self._popen.returncode is not None:
            return True
        try:
            pid, status, usage = os.wait4(self.pid, os.WNOHANG)
        except ChildProcessError:  # reaped by a poll()
            return self._popen.poll() is not None
        if not pid:
            return False
        self._popen.returncode = os.waitstatus_to_exitcode(status)
        self.max_rss_kb = usage.ru_maxrss
        return True


class ForkedWorker:
    """A worker forked from a template: the template reaps it and writes its wait status and peak memory into
    ``status_fd`` (whose other end no worker holds)."""

    def __init__(self, pid: int, status_fd: int) -> None:
        self.pid = pid
        self.returncode: int | None = None
        self.max_rss_kb = 0
        self._status_fd = status_fd
        os.set_blocking(status_fd, False)

    def poll(self) -> int | None:
        self.reap()
        return self.returncode

    def reap(self) -> bool:
        if self.returncode is not None:
            return True
        try:
            data = os.read(self._status_fd, 64)
        except BlockingIOError:
            return False
        if data:
            status, peak = (int(part) for part in data.split())
            self.returncode, self.max_rss_kb = os.waitstatus_to_exitcode(status), peak
        elif _running(self.pid):  # the template ended before the worker did: nobody reports its status
            return False
        else:
            log.warning("worker %d ended after its template did: its exit status is unknown", self.pid)
            self.returncode = 255
        os.close(self._status_fd)
        return True


def _running(pid: int) -> bool:
    try:
        with open(f"/proc/{pid}/stat") as f:
            return f.read().rsplit(")", 1)[1].split()[0] != "Z"
    except (OSError, IndexError):
        return False


class TemplateUnavailable(Exception):
    """The template could not start or answer (said once; workers are executed instead)."""


class WorkerTemplate:
    """One template process and the control socket to it."""

    def __init__(self, env: Mapping[str, str], timeout_s: float) -> None:
        ours, theirs = socket.socketpair(socket.AF_UNIX, socket.SOCK_SEQPACKET)
        self._errors = tempfile.TemporaryFile()  # what it says if it cannot start
        try:
            self._process = subprocess.Popen(
                [sys.executable, "-m", _TEMPLATE_MODULE, str(theirs.fileno())], env=dict(env), cwd="/",
                stdin=subprocess.DEVNULL, stdout=subprocess.DEVNULL, stderr=self._errors,
                pass_fds=(theirs.fileno(),), start_new_session=True)
        finally:
            theirs.close()
        self._socket = ours
        self._lock = threading.Lock()
        ours.settimeout(timeout_s)
        try:
            ready = ours.recv(64)
        except OSError as exc:
            self.close()
            raise TemplateUnavailable(f"it did not start within {timeout_s:.0f} s ({exc})") from None
        if ready != b"ready":
            why = self._error_tail()
            self.close()
            raise TemplateUnavailable(f"it ended as it started: {why}")

    def _error_tail(self) -> str:
        try:
            self._process.wait(5)
            self._errors.seek(0)
            return self._errors.read().decode(errors="replace").strip().splitlines()[-1]
        except (subprocess.TimeoutExpired, IndexError, OSError):
            return "no word why"

    @property
    def alive(self) -> bool:
        return self._process.poll() is None

    def fork(self, start: WorkerStart) -> ForkedWorker:
        request = {"env": dict(start.env), "home": str(start.home), "plan": start.plan,
                   "limits": vars(start.limits), "cgroup_procs": list(start.cgroup_procs)}
        status_r, status_w = os.pipe()
        try:
            with self._lock:
                try:
                    socket.send_fds(self._socket, [json.dumps(request).encode()],
                                    [*(start.fds[role] for role in ROLES), status_w])
                    answer = json.loads(self._socket.recv(4096) or b"{}")
                except (OSError, ValueError) as exc:
                    raise TemplateUnavailable(f"it stopped answering ({exc})") from None
        except BaseException:
            os.close(status_r)
            raise
        finally:
            os.close(status_w)
        if "pid" not in answer:
            os.close(status_r)
            raise TemplateUnavailable(answer.get("error") or "it ended")
        return ForkedWorker(answer["pid"], status_r)

    def close(self) -> None:
        """No more workers from this template: it ends once the last one it forked has ended (it reports their
        exit statuses until then)."""
        self._socket.close()
        self._errors.close()


class _Templates:
    """This process's templates, by environment (:data:`MOST_TEMPLATES` at most, the least recently used ended)."""

    def __init__(self) -> None:
        self._owner = os.getpid()
        self._lock = threading.Lock()
        self._by_env: dict[tuple, WorkerTemplate] = {}
        self._ending: list[WorkerTemplate] = []  # closed, serving their last workers; kept until they exit

    def fork(self, start: WorkerStart, timeout_s: float) -> ForkedWorker:
        key = start.template_key()
        with self._lock:
            self._ending = [ending for ending in self._ending if ending.alive]
            template = self._by_env.pop(key, None)
            if template is not None and not template.alive:
                self._end(template)
                template = None
            if template is None:
                template = WorkerTemplate(start.env, timeout_s)
            self._by_env[key] = template  # the most recently used last
            while len(self._by_env) > MOST_TEMPLATES:
                self._end(self._by_env.pop(next(iter(self._by_env))))
        try:
            return template.fork(start)
        except TemplateUnavailable:
            with self._lock:
                if self._by_env.get(key) is template:
                    del self._by_env[key]
                self._end(template)
            raise

    def _end(self, template: WorkerTemplate) -> None:
        template.close()
        self._ending.append(template)

    def close(self) -> None:
        if os.getpid() != self._owner:  # a forked copy of this process: the templates are the parent's
            return
        with self._lock:
            for template in self._by_env.values():
                self._end(template)
            self._by_env.clear()


_templates: _Templates | None = None
_templates_lock = threading.Lock()


def _these_templates() -> _Templates:
    global _templates
    with _templates_lock:
        if _templates is None or _templates._owner != os.getpid():
            _templates = _Templates()
            atexit.register(_templates.close)
        return _templates


def forks(mode: Literal["auto", "fork", "exec"]) -> bool:
    """Whether workers are forked from a template under ``harness.worker_start = mode``."""
    return mode == "fork" or (mode == "auto" and sys.platform == "linux")


def start_worker(start: WorkerStart, mode: Literal["auto", "fork", "exec"], *, timeout_s: float,
                 joins_cgroup: Callable[[], None] | None = None) -> StartedWorker:
    """A new worker, forked from a template where ``mode`` says so and a template answers, else executed.
    ``joins_cgroup`` moves the calling process into the worker's cgroup (executed workers); a forked one joins
    through ``start.cgroup_procs``."""
    if forks(mode):
        try:
            return _these_templates().fork(start, timeout_s)
        except TemplateUnavailable as exc:
            _said_once(str(exc))
    return ExecutedWorker(start, joins_cgroup)


@functools.cache
def _said_once(why: str) -> None:
    log.warning("workers start as new interpreters: their template could not serve (%s)", why)
