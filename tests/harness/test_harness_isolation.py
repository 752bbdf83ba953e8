"""Candidates run only in worker processes: no secrets, a scratch directory, limits, their own session, a
private pipe; warm workers are reused only after a clean, correct candidate."""

from __future__ import annotations

import os
import pickle
import re
import resource
import time
from pathlib import Path

import pytest

from kforge_core.harness import Harness
from kforge_core.harness import flags as F
from kforge_core.harness.protocol import ReplyUnpickler
from kforge_core.records import Failure

from .helpers import SELECTION, TORCH_CPU, candidate, problem, settings_for


def reported(verdict, key: str) -> str:
    match = re.search(rf"^{key}=(.*)$", verdict.stdout, re.MULTILINE)
    assert match, f"{key} not in the candidate's output: {verdict.stdout[:500]}"
    return match.group(1)


def test_the_worker_environment_has_no_secrets(make_harness, monkeypatch):
    secrets = ["OPENAI_API_KEY", "ANTHROPIC_API_KEY", "MY_SERVICE_API_KEY", "GITHUB_TOKEN", "HF_TOKEN",
               "AWS_SECRET_ACCESS_KEY", "AWS_ACCESS_KEY_ID", "AZURE_CLIENT_SECRET", "GOOGLE_APPLICATION_CREDENTIALS",
               "DB_PASSWORD", "SOME_SECRET_VALUE"]
    for name in secrets:
        monkeypatch.setenv(name, "do-not-leak")
    monkeypatch.setenv("KFORGE_TEST_HARMLESS", "1")
    verdict = make_harness().evaluate(candidate("env_report"))
    assert verdict.correct, verdict.message
    visible = reported(verdict, "ENV").split(",")
    assert not set(secrets) & set(visible)
    assert "KFORGE_TEST_HARMLESS" in visible and "PATH" in visible
    assert "do-not-leak" not in verdict.stdout


@pytest.mark.slow
def test_inductor_compiles_in_the_workers_own_process_unless_the_user_said_otherwise(make_harness, monkeypatch):
    monkeypatch.delenv("TORCHINDUCTOR_COMPILE_THREADS", raising=False)
    seen = [reported(make_harness(**settings).evaluate(candidate("env_report")), "COMPILE_THREADS")
            for settings in ({}, {"compile_threads": 0})]
    monkeypatch.setenv("TORCHINDUCTOR_COMPILE_THREADS", "4")
    seen.append(reported(make_harness().evaluate(candidate("env_report")), "COMPILE_THREADS"))
    assert seen == ["1", "none", "4"]  # the setting's default, PyTorch's own choice, the user's variable


def test_a_candidate_runs_in_its_own_scratch_directory_with_limits(relu_harness):
    harness = relu_harness
    verdict = harness.evaluate(candidate("env_report"))
    cwd = Path(reported(verdict, "CWD"))
    assert cwd.is_relative_to(harness.root) and cwd != Path.cwd()
    assert (cwd / "env_report.py").read_text() == candidate("env_report").source
    assert (cwd / "written-by-candidate.txt").read_text() == "hello"
    assert reported(verdict, "RLIMIT_CORE") == "0,0"
    file_limit = harness.settings.harness.file_size_limit_mb * 1024 * 1024
    assert reported(verdict, "RLIMIT_FSIZE") == f"{file_limit},{file_limit}"
    assert reported(verdict, "RLIMIT_AS") == f"{resource.RLIM_INFINITY},{resource.RLIM_INFINITY}"  # 0: unlimited
    assert reported(verdict, "SESSION_LEADER") == "True"  # its own session: the whole group can be killed
    assert int(reported(verdict, "PID")) != os.getpid()


def test_the_memory_limit_limits_the_address_space_on_the_cpu(make_harness):
    verdict = make_harness(memory_limit_mb=3072).evaluate(candidate("env_report"))
    assert reported(verdict, "RLIMIT_AS") == f"{3072 << 20},{3072 << 20}"


def test_scratch_directories_are_kept_under_a_given_root_and_removed_otherwise(cache_dir, tmp_path):
    with Harness(backend=TORCH_CPU, problem=problem("relu_scale"), settings=settings_for(cache_dir),
                 plugins=SELECTION, scratch_root=tmp_path / "kept") as kept:
        kept.evaluate(candidate("env_report"), measure=False)
    (scratch,) = (tmp_path / "kept" / "workers").glob("*/candidates/*/written-by-candidate.txt")
    assert (scratch.parent / "stdout.txt").read_text().count("PID=") == 1  # its captured output, kept beside it
    with Harness(backend=TORCH_CPU, problem=problem("relu_scale"), settings=settings_for(cache_dir),
                 plugins=SELECTION) as temporary:
        root = temporary.root
        (root / "workers" / "candidates").mkdir()  # what evaluations would leave
        assert root.exists()
    assert not root.exists()


@pytest.fixture(scope="module")
def unsandboxed_harness(cache_dir):
    """A harness without the sandbox, whose pids are the host's: a worker is told apart by its pid, and a pid a
    candidate writes down is one this process can look up. Its verify limit is short, for a candidate that hangs."""
    settings = settings_for(cache_dir, spare_workers=0, baselines=(), sandbox="off", verify_timeout_s=3)
    with Harness(backend=TORCH_CPU, problem=problem("relu_scale"), settings=settings, plugins=SELECTION) as harness:
        yield harness


def test_warm_workers_are_reused_after_correct_candidates_and_replaced_after_faults(unsandboxed_harness):
    harness = unsandboxed_harness
    first = harness.evaluate(candidate("env_report"))
    second = harness.evaluate(candidate("env_report", label="again"))
    assert not first.worker_replaced and not second.worker_replaced
    assert reported(first, "PID") == reported(second, "PID")  # torch was imported once
    assert harness.evaluate(candidate("mismatch")).worker_replaced
    third = harness.evaluate(candidate("env_report", label="after-the-fault"))
    assert reported(third, "PID") != reported(first, "PID")


def test_without_warm_workers_every_candidate_gets_a_new_process(make_harness):
    harness = make_harness(warm_workers=False, sandbox="off")  # pids told apart as above
    pids = {reported(harness.evaluate(candidate("env_report", label=f"n{i}"), measure=False), "PID")
            for i in range(2)}
    assert len(pids) == 2


def test_a_timeout_kills_what_the_candidate_started(unsandboxed_harness):
    harness = unsandboxed_harness
    verdict = harness.evaluate(candidate("child_then_hang"))
    assert verdict.failure is Failure.TIMEOUT
    (pid_file,) = harness.root.glob("workers/*/candidates/*/child.pid")
    child = int(pid_file.read_text())
    deadline = time.monotonic() + 10
    while _alive(child) and time.monotonic() < deadline:
        time.sleep(0.1)
    assert not _alive(child)


def _alive(pid: int) -> bool:
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    return Path(f"/proc/{pid}/status").exists() and "zombie" not in Path(f"/proc/{pid}/status").read_text()


def test_a_reply_forged_into_the_private_pipe_is_rejected(relu_harness):
    verdict = relu_harness.evaluate(candidate("forge_reply"))
    assert verdict.failure is Failure.CHEAT
    assert {f.code for f in verdict.flags} >= {F.TAMPERING}
    assert "wrote into the harness's private pipe" in verdict.message


def test_worker_replies_cannot_run_code_in_the_kforge_process(tmp_path):
    class Exploit:
        def __reduce__(self):
            return (os.system, (f"touch {tmp_path / 'pwned'}",))

    with pytest.raises(pickle.UnpicklingError, match="may not contain posix.system"):
        import io

        ReplyUnpickler(io.BytesIO(pickle.dumps(Exploit()))).load()
    assert not (tmp_path / "pwned").exists()


DRIVER = """
import sys
sys.path[:0] = {paths!r}
from pathlib import Path
from kforge_core.harness import Harness
from harness.helpers import SELECTION, TORCH_CPU, candidate, problem, settings_for
harness = Harness(backend=TORCH_CPU, problem=problem("relu_scale"), plugins=SELECTION,
                  settings=settings_for(Path({cache!r}), spare_workers=0, sandbox="off"), scratch_root=Path({root!r}))
harness.evaluate(candidate("pid_then_hang"))
"""


def test_workers_end_when_the_kforge_process_is_killed(cache_dir, tmp_path):
    import signal
    import subprocess
    import sys

    script = DRIVER.format(paths=[str(Path(__file__).resolve().parents[1])], cache=str(cache_dir),
                           root=str(tmp_path / "root"))
    driver = subprocess.Popen([sys.executable, "-c", script])
    deadline = time.monotonic() + 120
    while not list(tmp_path.glob("root/workers/*/candidates/*/worker.pid")) and time.monotonic() < deadline:
        time.sleep(0.2)
    worker = int(next(tmp_path.glob("root/workers/*/candidates/*/worker.pid")).read_text())
    assert _alive(worker)
    driver.send_signal(signal.SIGKILL)  # KForge dies with a candidate stuck in a loop
    driver.wait()
    deadline = time.monotonic() + 10
    while _alive(worker) and time.monotonic() < deadline:
        time.sleep(0.1)
    assert not _alive(worker)


def test_environment_variables_a_candidate_set_are_put_back_before_the_next_one(relu_harness):
    """A published solution set TORCH_CUDA_ARCH_LIST at import: every later solution its warm worker served built
    for that architecture, and under another build-cache key than the one built ahead (an H100's last four
    problems built again in their own stages, 16-27 s each)."""
    harness = relu_harness  # warm_workers on, as by default
    setter = harness.evaluate(candidate("arch_list_setter"))
    assert setter.correct, setter.message
    assert any("put back for the next candidate: ARCH_LIST_SETTER_WAS_HERE, TORCH_CUDA_ARCH_LIST" in note
               for note in setter.verify.notes), setter.verify.notes
    assert not setter.worker_replaced  # put back, the worker is as it was: it stays warm
    after = harness.evaluate(candidate("env_report"))
    assert after.correct and not after.worker_replaced, after.message
    assert "TORCH_CUDA_ARCH_LIST" not in reported(after, "ENV").split(",")
    assert "ARCH_LIST_SETTER_WAS_HERE" not in reported(after, "ENV").split(",")
