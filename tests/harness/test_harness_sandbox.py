"""The worker sandbox (Linux namespaces): a candidate sees no other process, no network, neither the run store nor
the home directory, writes only to its scratch directory and the caches; and whatever it starts ends with its
worker, in the sandbox or not."""

from __future__ import annotations

import os
import shutil
import socket
import time
from pathlib import Path

import pytest

from kforge_core.harness import Harness
from kforge_core.harness.host.namespaces import sandbox_status

from kforge_core.problem import load_problem

from .helpers import PROBLEMS, SELECTION, TORCH_CPU, candidate, problem, settings_for
from .test_harness_isolation import reported

needs_sandbox = pytest.mark.skipif(not sandbox_status().available, reason="no namespace sandbox on this machine")


@needs_sandbox
def test_a_sandboxed_candidate_reaches_nothing_outside_its_scratch_directory(cache_dir, tmp_path, monkeypatch):
    runs = tmp_path / "runs"
    runs.mkdir()
    (runs / "kforge.db").write_text("the store")
    home = tmp_path / "home"
    home.mkdir()
    elsewhere = Path("/var/tmp") / f"kforge-sandbox-test-{os.getpid()}.txt"
    listener = socket.create_server(("127.0.0.1", 0))
    monkeypatch.setenv("HOME", str(home))
    monkeypatch.setenv("SANDBOX_TEST_RUNS_DIR", str(runs))
    monkeypatch.setenv("SANDBOX_TEST_ELSEWHERE", str(elsewhere))
    monkeypatch.setenv("SANDBOX_TEST_PORT", str(listener.getsockname()[1]))
    settings = settings_for(cache_dir, spare_workers=0, baselines=(), sandbox="required")
    settings = type(settings)(**{**settings.__dict__, "runs_dir": runs})
    try:
        hidden_problem = home / "problems" / "relu_scale.py"  # under the home directory, hidden from workers
        hidden_problem.parent.mkdir()
        shutil.copy(PROBLEMS / "relu_scale.py", hidden_problem)
        with Harness(backend=TORCH_CPU, problem=load_problem(hidden_problem), settings=settings, plugins=SELECTION,
                     scratch_root=tmp_path / "scratch") as harness:
            verdict = harness.evaluate(candidate("sandbox_probe"))
    finally:
        listener.close()
        escaped = elsewhere.exists()
        elsewhere.unlink(missing_ok=True)
    assert verdict.correct, verdict.message
    assert int(reported(verdict, "PIDS")) <= 3  # its init and itself (and, at most, one more of its own)
    assert reported(verdict, "NETWORK") != "done"
    assert reported(verdict, "RUNS_DIR") in ("", "FileNotFoundError")
    assert reported(verdict, "WRITE_ELSEWHERE") == "OSError"  # a read-only file system
    assert reported(verdict, "WRITE_SCRATCH") == "done"
    assert [p.name for p in runs.iterdir()] == ["kforge.db"] and (runs / "kforge.db").read_text() == "the store"
    assert [p.name for p in home.iterdir()] == ["problems"] and not escaped


def _grows(path: Path) -> bool:
    before = path.stat().st_size
    time.sleep(0.5)
    return path.stat().st_size > before


@pytest.mark.parametrize("name, sandbox", [
    pytest.param("fork_writer", "required", marks=needs_sandbox),  # leaves its session: only the sandbox ends it
    ("fork_writer_in_group", "off"),
])
def test_a_process_a_candidate_started_ends_with_its_worker(cache_dir, tmp_path, name, sandbox):
    harness = Harness(backend=TORCH_CPU, problem=problem("relu_scale"), plugins=SELECTION, scratch_root=tmp_path,
                      settings=settings_for(cache_dir, spare_workers=0, baselines=(), sandbox=sandbox))
    try:
        verdict = harness.evaluate(candidate(name))
        assert verdict.correct, verdict.message
        grow = next(tmp_path.glob("workers/*/candidates/*/grow.txt"))  # in its worker's home
        assert _grows(grow)  # the child runs while its (warm) worker is kept
    finally:
        harness.close()
    assert not _grows(grow)


@pytest.mark.gpu
@needs_sandbox
def test_a_sandboxed_worker_builds_and_runs_a_cuda_kernel(cache_dir, tmp_path):
    import torch

    if not torch.cuda.is_available():
        pytest.skip("needs an NVIDIA GPU")
    from .helpers import TORCH_CUDA

    settings = settings_for(cache_dir, spare_workers=0, sandbox="required", compile_timeout_s=900,
                            verify_timeout_s=300, timing_timeout_s=300)
    with Harness(backend=TORCH_CUDA, problem=problem("relu_scale"), settings=settings, plugins=SELECTION,
                 scratch_root=tmp_path) as harness:
        verdict = harness.evaluate(candidate("gpu_relu_scale"))  # nvcc, the build cache, /dev/nvidia*
    assert verdict.correct, verdict.message
    assert verdict.speedup("eager") is not None


def test_kforge_check_says_whether_the_sandbox_applies(monkeypatch):
    from click.testing import CliRunner

    from kforge_core.app import App
    from kforge_core.cli import cli

    def check(mode: str):
        monkeypatch.setenv("KFORGE_HARNESS__SANDBOX", mode)
        return CliRunner().invoke(cli, ["check", "--sandbox"], obj=App(load_plugins=False))

    status = sandbox_status()
    auto, off, required = check("auto"), check("off"), check("required")
    assert auto.output.startswith("sandbox: on" if status.available else "sandbox: unavailable")
    assert off.exit_code == 0 and off.output.startswith('sandbox: off (harness.sandbox = "off")')
    assert required.exit_code == (0 if status.available else 1)
    assert status.why in auto.output + off.output + required.output


def test_without_the_sandbox_the_kforge_process_is_not_dumpable():
    import ctypes

    from kforge_core.harness.host.namespaces import use_sandbox

    assert use_sandbox("off") is False
    pr_get_dumpable = 3
    assert ctypes.CDLL(None).prctl(pr_get_dumpable, 0, 0, 0, 0) == 0  # its /proc/PID/environ is root's only


@needs_sandbox
def test_the_sandbox_is_found_available_for_a_python_that_lives_under_tmp(tmp_path):
    """A clone under /tmp has its virtual environment there: the probe must keep that Python in sight (it once
    hid it, and KForge said this machine allowed no namespaces)."""
    import subprocess
    import sys

    from kforge_core.harness.host.namespaces import LAUNCHER

    assert str(tmp_path).startswith("/tmp/")
    # a virtual environment's python under /tmp, linking to another link under /tmp, linking to the interpreter
    inner = tmp_path / "inner" / "python"
    inner.parent.mkdir(parents=True)
    inner.symlink_to(sys.executable)
    python = tmp_path / "venv" / "bin" / "python"
    python.parent.mkdir(parents=True)
    python.symlink_to(inner)
    probe = subprocess.run([str(python), "-I", "-S", str(LAUNCHER), "--probe"], capture_output=True, text=True,
                           timeout=60, cwd="/")
    assert probe.returncode == 0, probe.stderr


def test_a_readable_directory_never_brings_a_hidden_one_back(tmp_path):
    """A script run from the home directory (or from /tmp) puts that directory on sys.path: it must not become
    readable in the sandbox, which would undo the hiding of the home directory with everything in it."""
    from kforge_core.harness.host.namespaces import sandbox_plan

    home = tmp_path / "home"
    (home / "project").mkdir(parents=True)
    plan = sandbox_plan(scratch_root=tmp_path / "scratch", cache_dir=tmp_path / "cache", runs_dir=tmp_path / "runs",
                        sys_path=[str(home), "/tmp", str(home / "project")], environ={"HOME": str(home)})
    assert str(home) in plan.hide and str(home) not in plan.readable and "/tmp" not in plan.readable
    assert str(home / "project") in plan.readable  # below a hidden directory: bound back, read-only
    assert plan.hides(home / ".config" / "keys.json") and not plan.hides(home / "project" / "plugin.py")


def test_the_sandbox_plan_reads_the_imported_packages_while_another_thread_imports(monkeypatch):
    # two bench slots make their harnesses in threads of one process: a module imported by one while the other
    # listed sys.modules ended the other's bench ("dictionary changed size during iteration")
    import sys

    from kforge_core.harness.host.namespaces import _imported_package_roots

    class ImportingMeanwhile(dict):
        def items(self):  # what a thread importing between two steps of the listing does to it
            for number, item in enumerate(super().items()):
                if number == 1:
                    self[f"imported_meanwhile_{len(self)}"] = None
                yield item

    monkeypatch.setattr(sys, "modules", ImportingMeanwhile(sys.modules))
    assert Path(__file__).resolve().parents[2] / "kforge_core" in _imported_package_roots()


def test_kforge_check_sandbox_says_so_in_json_and_its_help_says_problem_may_be_left_out(monkeypatch):
    import json

    from click.testing import CliRunner

    from kforge_core.app import App
    from kforge_core.cli import cli

    monkeypatch.setenv("KFORGE_HARNESS__SANDBOX", "off")
    done = CliRunner().invoke(cli, ["check", "--sandbox", "--json"], obj=App(load_plugins=False))
    assert done.exit_code == 0, done.output
    sandbox = json.loads(done.stdout)["sandbox"]
    status = sandbox_status()
    assert (sandbox["mode"], sandbox["on"], sandbox["available"], sandbox["why"]) == \
        ("off", False, status.available, status.why)
    usage = CliRunner().invoke(cli, ["check", "--help"], obj=App(load_plugins=False)).stdout
    assert "Usage: kforge check [OPTIONS] [PROBLEM]" in usage.replace("cli check", "kforge check")
