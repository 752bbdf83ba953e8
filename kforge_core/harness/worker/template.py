"""A template for workers: ``python -m kforge_core.harness.worker.template CONTROL_FD``.

Starting a worker as a new interpreter costs about two seconds of CPU time, most of it importing torch; a KForge
run or a test suite starts hundreds. This process imports torch and the worker's modules once, touches no device,
and forks a worker for each request the KForge process sends over its control socket
(:mod:`kforge_core.harness.host.worker_start`). The child becomes what ``python -m kforge_core.harness.worker``
would have been: it keeps only the descriptors of its request, starts a session of its own, takes the limits, the
cgroup, the directory and the environment it was given and, where the request has a sandbox plan, enters the
namespaces the launcher makes (:func:`namespace_launcher.run`, with the worker's ``main`` in place of an exec)
before any candidate code runs.

The template runs no candidate code and holds no secret: it was started with a worker's environment (secrets
removed), and the requests it reads hold only what each worker gets anyway. It reaps the workers it forked and
writes each one's wait status and peak memory to the status pipe its request came with; once the KForge process
closes the control socket it forks no more, and exits when the last of its workers has ended.
"""

from __future__ import annotations

import json
import os
import select
import signal
import socket
import sys
import tempfile
import traceback

from ..protocol import WORKER_FD_ROLES as ROLES, worker_arguments

_MAX_FDS = len(ROLES) + 1
_PR_SET_NAME = 15


def main(argv: list[str]) -> int:
    control = socket.socket(fileno=int(argv[1]))
    import torch  # noqa: F401 - the import every worker would pay for

    from . import worker  # noqa: F401 - and the worker's own modules

    wake_r, wake_w = os.pipe()
    os.set_blocking(wake_r, False)
    os.set_blocking(wake_w, False)
    signal.signal(signal.SIGCHLD, lambda *_: None)
    signal.set_wakeup_fd(wake_w)
    statuses: dict[int, int] = {}  # a forked worker's pid -> the status pipe's end its request came with
    control.sendall(b"ready")
    accepting = True
    while accepting or statuses:
        try:
            ready, _, _ = select.select([control, wake_r] if accepting else [wake_r], [], [])
        except InterruptedError:
            continue
        if wake_r in ready:
            while _drained(wake_r):
                pass
        _reap(statuses)
        if control not in ready:
            continue
        message, fds, _, _ = socket.recv_fds(control, 1 << 20, _MAX_FDS)
        if not message:  # the KForge process is gone, or done with this template: it ends with its last worker
            accepting = False
            continue
        try:
            request = json.loads(message)
            if len(fds) != _MAX_FDS:
                raise ValueError(f"{len(fds)} descriptors came with the request, {_MAX_FDS} are needed")
        except ValueError as exc:
            for fd in fds:
                os.close(fd)
            control.sendall(json.dumps({"error": str(exc)}).encode())
            continue
        pid = os.fork()
        if pid == 0:  # the status pipe's end is the template's alone: a candidate could write a status into it
            _become_worker(request, dict(zip(ROLES, fds)), keep=set(fds[:-1]))
        for fd in fds[:-1]:
            os.close(fd)
        statuses[pid] = fds[-1]
        control.sendall(json.dumps({"pid": pid}).encode())
    return 0


def _drained(fd: int) -> bool:
    try:
        return bool(os.read(fd, 4096))
    except BlockingIOError:
        return False


def _reap(statuses: dict[int, int]) -> None:
    """Write the wait status and peak memory (KiB) of each forked worker that ended into its status pipe."""
    while statuses:
        try:
            pid, status, usage = os.wait4(-1, os.WNOHANG)
        except ChildProcessError:
            return
        if not pid:
            return
        fd = statuses.pop(pid, None)
        if fd is not None:
            try:
                os.write(fd, f"{status} {usage.ru_maxrss}".encode())
            except OSError:  # the KForge process stopped reading: nobody waits for this status
                pass
            os.close(fd)


def _become_worker(request: dict, fds: dict[str, int], keep: set[int]) -> None:
    """In the forked child: become the worker the request describes, run it, and exit as it ended."""
    code = 1
    try:
        signal.set_wakeup_fd(-1)
        signal.signal(signal.SIGCHLD, signal.SIG_DFL)
        _close_all_but(keep)
        null = os.open(os.devnull, os.O_RDONLY)
        os.dup2(null, 0)
        os.close(null)
        os.dup2(fds["own"], 1)
        os.dup2(fds["own"], 2)
        for role in ROLES:
            os.set_inheritable(fds[role], True)  # as the descriptors a new worker gets (pass_fds) are
        os.setsid()
        from ..process_limits import WorkerLimits

        WorkerLimits(**request["limits"]).apply()
        for procs in request["cgroup_procs"]:  # joining the worker's cgroup; a failure leaves it where it is
            try:
                with open(procs, "w") as f:
                    f.write("0")
            except OSError:
                pass
        os.chdir(request["home"])
        os.environ.clear()
        os.environ.update(request["env"])
        tempfile.tempdir = None  # found again from this environment (TMPDIR) when first asked
        sys.path[0] = os.getcwd()  # what ``python -m`` puts first, in the worker's directory
        _reseed()
        argv = worker_arguments(fds)
        sys.argv = [os.path.join(os.path.dirname(__file__), "__main__.py"), *argv]  # as ``python -m`` sets them
        if request.get("plan") is not None:
            from .. import namespace_launcher

            try:
                namespace_launcher.run(request["plan"], [], start=lambda: _run_worker(argv))  # exits as it ended
            except OSError as exc:  # the namespaces could not be made: said as the launcher says it
                print(f"kforge sandbox: {exc}", file=sys.stderr)
                code = namespace_launcher.SETUP_FAILED
                return
        code = _run_worker(argv)
    except BaseException:  # noqa: BLE001 - said on the worker's own output, which the KForge process reads
        traceback.print_exc()
    finally:
        for stream in (sys.stdout, sys.stderr):
            try:
                stream.flush()
            except Exception:  # noqa: BLE001
                pass
        os._exit(code)


def _run_worker(argv: list[str]) -> int:
    from ..protocol import WORKER_NAME
    from .worker import main as worker_main

    _name_this_process(WORKER_NAME)  # how the KForge process finds it among the sandbox's (``activity.py``)

    try:
        return worker_main(argv)
    except SystemExit as exc:
        return exc.code if isinstance(exc.code, int) else 1
    except BaseException:  # noqa: BLE001
        traceback.print_exc()
        return 1


def _name_this_process(name: str) -> None:
    """Set this process's name (``/proc/PID/comm``; its command line stays the template's), where Linux allows."""
    try:
        import ctypes

        ctypes.CDLL(None).prctl(_PR_SET_NAME, name.encode(), 0, 0, 0)
    except (OSError, AttributeError):
        pass


def _close_all_but(keep: set[int]) -> None:
    """Close every descriptor of the template's but those in ``keep`` and 0-2: its control socket and the status
    pipes of other workers stay out of this worker's reach."""
    for name in os.listdir("/proc/self/fd") if os.path.isdir("/proc/self/fd") else ():
        fd = int(name)
        if fd > 2 and fd not in keep:
            try:
                os.close(fd)
            except OSError:  # the directory's own descriptor, closed by now
                pass


def _reseed() -> None:
    """Random generators seeded from the system, as in a new process: each forked worker would otherwise draw what
    every other one draws (Python's ``random`` reseeds itself after a fork; NumPy's global generator does not)."""
    numpy = sys.modules.get("numpy")
    if numpy is not None:
        numpy.random.seed()


if __name__ == "__main__":
    sys.exit(main(sys.argv))
