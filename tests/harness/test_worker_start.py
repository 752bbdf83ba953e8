"""A worker forked from a template (``harness.worker_start``) is the worker a new interpreter would have been: the
same conditions, no descriptor of its template's, its end reported as an executed worker's is; a template that
cannot start leaves workers executed, and templates end with the KForge process."""

from __future__ import annotations

import dataclasses
import logging
import os
import signal
import subprocess
import sys
import time
from pathlib import Path

import pytest

from kforge_core.harness.host import worker_start
from kforge_core.harness.host.namespaces import sandbox_plan, sandbox_status
from kforge_core.harness.host.process import WorkerProcess
from kforge_core.harness.protocol import DeviceFacts, WorkerInit
from kforge_core.settings import HarnessSettings

from .helpers import QUICK, SELECTION, TORCH_CPU, candidate
from .test_harness_isolation import reported

TEMPLATE_MODULE = "kforge_core.harness.worker.template"


def _worker(mode: str, cache_dir: Path, home: Path, sandbox: bool = False) -> WorkerProcess:
    settings = dataclasses.replace(QUICK, worker_start=mode)
    sys_path = tuple(str(Path(p).resolve()) for p in sys.path if p)
    plan = sandbox_plan(scratch_root=home.parent, cache_dir=cache_dir, runs_dir=home.parent / "runs",
                        sys_path=sys_path) if sandbox else None
    worker = WorkerProcess(WorkerInit(sys_path, SELECTION, TORCH_CPU.name, True, None, settings, cache_dir,
                                      sandbox=plan), home)
    assert isinstance(worker.receive(QUICK.startup_timeout_s, "starting the worker").value, DeviceFacts)
    return worker


def test_a_forked_worker_sees_what_an_executed_one_sees(make_harness):
    seen = {}
    for mode in ("exec", "fork"):
        harness = make_harness(worker_start=mode)
        verdict = harness.evaluate(candidate("env_report"))
        assert verdict.correct, verdict.message
        cwd = Path(reported(verdict, "CWD"))
        assert cwd.is_relative_to(harness.root)
        seen[mode] = {key: reported(verdict, key) for key in ("ENV", "RLIMIT_CORE", "RLIMIT_FSIZE", "RLIMIT_AS",
                                                               "SESSION_LEADER", "COMPILE_THREADS")}
    assert seen["fork"] == seen["exec"]
    assert seen["fork"]["SESSION_LEADER"] == "True"


def test_workers_whose_environments_differ_beyond_what_imports_read_share_a_template(make_harness, monkeypatch):
    """A variable no import reads (here one of the user's own) does not need a template of its own: each worker
    gets its environment in its copy. A test runner's variable that changes with every test once started a
    template per test."""
    monkeypatch.setattr(worker_start, "_templates", None)
    seen = []
    for name in ("KFORGE_TEST_FIRST", "KFORGE_TEST_SECOND"):
        monkeypatch.delenv("KFORGE_TEST_FIRST", raising=False)
        monkeypatch.setenv(name, "1")
        verdict = make_harness(worker_start="fork", sandbox="off").evaluate(candidate("env_report"))
        assert verdict.correct, verdict.message
        seen.append((reported(verdict, "ENV").split(","), _parent(int(reported(verdict, "PID")))))
    (first, first_parent), (second, second_parent) = seen
    assert "KFORGE_TEST_FIRST" in first and "KFORGE_TEST_SECOND" not in first
    assert "KFORGE_TEST_SECOND" in second and "KFORGE_TEST_FIRST" not in second
    assert first_parent == second_parent and TEMPLATE_MODULE in _cmdline(first_parent)


def test_a_forked_worker_is_the_templates_child_and_holds_none_of_its_descriptors(cache_dir, tmp_path):
    worker = _worker("fork", cache_dir, tmp_path / "forked")
    try:
        assert isinstance(worker.process, worker_start.ForkedWorker)
        assert TEMPLATE_MODULE in _cmdline(_parent(worker.pid))
        status_pipe = f"pipe:[{os.fstat(worker.process._status_fd).st_ino}]"
        held = [os.readlink(f"/proc/{worker.pid}/fd/{fd}") for fd in os.listdir(f"/proc/{worker.pid}/fd")]
        assert status_pipe not in held  # a candidate could write its own exit status there
        assert not [link for link in held if link.startswith("socket:")], held  # the template's control socket
    finally:
        worker.close()
    assert worker.process.returncode == 0  # asked to end, it ended by itself


@pytest.mark.skipif(not sandbox_status().available, reason="no namespace sandbox on this machine")
def test_a_forked_worker_in_the_sandbox_is_found_and_dumps_its_stacks(cache_dir, tmp_path):
    """The KForge process finds the worker among the sandbox's processes by its command line, which a forked
    worker's is not: it finds it by name, and the stack dump that tells compiling from hanging reaches it (the
    signal, sent to the launcher instead, would have ended the worker)."""
    worker = _worker("fork", cache_dir, tmp_path / "sandboxed", sandbox=True)
    try:
        assert worker.probe.pid != worker.pid  # the worker inside, not the process that made the namespaces
        assert "File " in worker.probe.stacks()
        assert worker.alive
    finally:
        worker.close()
    assert worker.process.returncode == 0


@pytest.mark.parametrize("sig", [signal.SIGSEGV, signal.SIGKILL])
def test_a_forked_workers_death_is_reported_as_an_executed_ones(cache_dir, tmp_path, sig):
    codes = {}
    for mode in ("exec", "fork"):
        worker = _worker(mode, cache_dir, tmp_path / mode)
        os.kill(worker.pid, sig)
        deadline = time.monotonic() + 10
        while not worker.process.reap() and time.monotonic() < deadline:
            time.sleep(0.01)
        codes[mode] = worker.process.returncode
        worker.kill()
    assert codes == {"exec": -sig, "fork": -sig}


def test_a_template_ended_for_another_still_reports_its_workers_end(cache_dir, tmp_path, monkeypatch):
    """A process keeps at most MOST_TEMPLATES: the least recently used one is ended for a new environment's, while
    its workers may still run (a warm worker serves many candidates): it stays until they end, saying how."""
    monkeypatch.setattr(worker_start, "_templates", None)
    monkeypatch.setattr(worker_start, "MOST_TEMPLATES", 1)
    monkeypatch.setenv("OMP_NUM_THREADS", "1")
    first = _worker("fork", cache_dir, tmp_path / "first")
    monkeypatch.setenv("OMP_NUM_THREADS", "2")  # read as torch is imported: another template
    second = _worker("fork", cache_dir, tmp_path / "second")
    try:
        assert _parent(first.pid) != _parent(second.pid)
        os.kill(first.pid, signal.SIGSEGV)
        deadline = time.monotonic() + 10
        while not first.process.reap() and time.monotonic() < deadline:
            time.sleep(0.01)
        assert first.process.returncode == -signal.SIGSEGV
    finally:
        first.kill()
        second.close()


def test_two_new_workers_draw_different_numbers_from_numpy(make_harness):
    harness = make_harness(worker_start="fork", warm_workers=False)  # a new worker for each candidate
    draws = []
    for label in ("first", "second"):
        verdict = harness.evaluate(candidate("numpy_draw", label))
        assert verdict.correct, verdict.message
        draws.append(reported(verdict, "NUMPY_DRAW"))
    assert draws[0] != draws[1]


def test_a_template_that_cannot_start_leaves_workers_executed(cache_dir, tmp_path, monkeypatch, caplog):
    monkeypatch.setattr(worker_start, "_TEMPLATE_MODULE", "kforge_core.no_such_module")
    monkeypatch.setattr(worker_start, "_templates", None)
    worker_start._said_once.cache_clear()
    with caplog.at_level(logging.WARNING, logger="kforge"):
        worker = _worker("fork", cache_dir, tmp_path / "executed")
    try:
        assert isinstance(worker.process, worker_start.ExecutedWorker)
    finally:
        worker.close()
    assert "their template could not serve" in caplog.text and "no_such_module" in caplog.text


DRIVER = """
import sys, time
sys.path[:0] = {paths!r}
from pathlib import Path
from harness.test_worker_start import _worker
worker = _worker("fork", Path({cache!r}), Path({home!r}))
print(worker.pid, flush=True)
time.sleep(600)
"""


def test_the_template_ends_when_the_kforge_process_is_killed(cache_dir, tmp_path):
    script = DRIVER.format(paths=[str(Path(__file__).resolve().parents[1])], cache=str(cache_dir),
                           home=str(tmp_path / "worker"))
    driver = subprocess.Popen([sys.executable, "-c", script], stdout=subprocess.PIPE, text=True)
    worker = int(driver.stdout.readline())
    templates = [pid for pid in _children(driver.pid) if TEMPLATE_MODULE in _cmdline(pid)]
    assert len(templates) == 1
    driver.kill()
    driver.wait()
    deadline = time.monotonic() + 10
    while (_alive(templates[0]) or _alive(worker)) and time.monotonic() < deadline:
        time.sleep(0.1)
    assert not _alive(templates[0])  # its control socket closed with the KForge process
    assert not _alive(worker)  # and the worker saw its lifeline close


def test_kforge_check_says_how_workers_start(monkeypatch):
    import json

    from click.testing import CliRunner

    from kforge_core.app import App
    from kforge_core.cli import cli

    def check(mode: str, *extra: str):
        monkeypatch.setenv("KFORGE_HARNESS__WORKER_START", mode)
        done = CliRunner().invoke(cli, ["check", "--sandbox", *extra], obj=App(load_plugins=False))
        assert done.exit_code == 0, done.output
        return done.stdout

    assert 'workers: forked from a template process that imported torch once' in check("fork")
    assert 'workers: executed, each a new interpreter (harness.worker_start = "exec")' in check("exec")
    start = json.loads(check("auto", "--json"))["worker_start"]
    assert (start["mode"], start["forked"]) == ("auto", sys.platform == "linux")
    assert start["summary"].startswith("workers: forked" if start["forked"] else "workers: executed")


def test_an_unknown_worker_start_is_refused():
    with pytest.raises(ValueError, match="worker_start"):
        HarnessSettings(worker_start="spawn")


def _children(pid: int) -> list[int]:
    found = []
    for entry in os.listdir("/proc"):
        if entry.isdigit():
            try:
                with open(f"/proc/{entry}/stat") as f:
                    if int(f.read().rsplit(")", 1)[1].split()[1]) == pid:
                        found.append(int(entry))
            except (OSError, IndexError, ValueError):
                continue
    return found


def _parent(pid: int) -> int:
    with open(f"/proc/{pid}/stat") as f:
        return int(f.read().rsplit(")", 1)[1].split()[1])


def _cmdline(pid: int) -> str:
    try:
        with open(f"/proc/{pid}/cmdline", "rb") as f:
            return f.read().replace(b"\0", b" ").decode()
    except OSError:
        return ""


def _alive(pid: int) -> bool:
    try:
        with open(f"/proc/{pid}/stat") as f:
            return f.read().rsplit(")", 1)[1].split()[0] != "Z"
    except (OSError, IndexError):
        return False
