"""The KForge process never follows a worker's paths, and the baseline cache is out of a candidate's reach: links a
candidate plants where its worker writes bring nothing of the host into a verdict and have nothing written through
them; a planted link the referee meets is tampering, named; a malformed or forged cache entry is measured afresh
with a one-line notice."""

from __future__ import annotations

import json
import shutil
from pathlib import Path

import pytest

from kforge_core.harness import Harness
from kforge_core.harness import flags as F
from kforge_core.problem import load_problem
from kforge_core.records import Failure

from .helpers import PROBLEMS, SELECTION, TORCH_CPU, candidate, problem, settings_for
from .torch_backend_plugin import TORCH_CPU_ACCELERATOR
from .test_harness_isolation import reported
from .test_harness_sandbox import needs_sandbox

SANDBOX_ON_AND_OFF = [pytest.param("required", marks=needs_sandbox), "off"]


def _harness(cache_dir: Path, sandbox: str, backend=TORCH_CPU, **changes) -> Harness:
    settings = settings_for(cache_dir, **{"spare_workers": 0, "baselines": (), "sandbox": sandbox, **changes})
    return Harness(backend=backend, problem=problem("relu_scale"), settings=settings, plugins=SELECTION)


def _host_environment_entry() -> str:
    """The longest entry of this process's own environment as ``/proc/self/environ`` shows it."""
    return max(Path("/proc/self/environ").read_bytes().decode(errors="replace").split("\0"), key=len)


@pytest.mark.parametrize("sandbox", SANDBOX_ON_AND_OFF)
def test_captured_output_replaced_by_links_brings_nothing_of_the_host_into_the_verdict(cache_dir, tmp_path,
                                                                                        monkeypatch, sandbox):
    home = tmp_path / "home"
    home.mkdir()
    credentials = home / ".credentials"
    credentials.write_text("aws_secret_access_key = HOST-ONLY-CREDENTIAL-7f3a\n")
    monkeypatch.setenv("HOME", str(home))
    monkeypatch.setenv("PATHS_TEST_TARGET", str(credentials))
    environment = _host_environment_entry()
    settings = settings_for(cache_dir, spare_workers=0, baselines=(), sandbox=sandbox)
    with Harness(backend=TORCH_CPU, problem=problem("relu_scale"), settings=settings, plugins=SELECTION,
                 scratch_root=tmp_path / "kept") as harness:  # kept: the captured output is written back there
        attacker = harness.evaluate(candidate("capture_links"), measure=False)
        honest = harness.evaluate(candidate("relu_scale_numpy"), measure=False)
    document = json.dumps(attacker.to_json())
    assert "HOST-ONLY-CREDENTIAL" not in document and environment not in document
    assert "the candidate's own words" in attacker.stdout  # its output is still captured
    assert credentials.read_text() == "aws_secret_access_key = HOST-ONLY-CREDENTIAL-7f3a\n"  # nothing written there
    assert honest.correct, honest.message


@needs_sandbox
def test_a_candidate_cannot_replace_the_problem_copy_workers_read(cache_dir, tmp_path, monkeypatch):
    home = tmp_path / "home"
    (home / "problems").mkdir(parents=True)
    shutil.copy(PROBLEMS / "relu_scale.py", home / "problems")  # under the hidden home: workers read a copy
    target = tmp_path / "host-file.txt"
    target.write_text("precious")
    monkeypatch.setenv("HOME", str(home))
    monkeypatch.setenv("PATHS_TEST_TARGET", str(target))
    settings = settings_for(cache_dir, spare_workers=0, baselines=(), sandbox="required")
    hidden = load_problem(home / "problems" / "relu_scale.py")
    with Harness(backend=TORCH_CPU, problem=hidden, settings=settings, plugins=SELECTION) as harness:
        attacker = harness.evaluate(candidate("problem_link"))  # wrong: its worker is replaced
        harness.expect_problem(hidden)  # the KForge process writes the copy again
        honest = harness.evaluate(candidate("relu_scale_numpy"))  # a new worker reads the copy
    assert attacker.failure is Failure.MISMATCH and attacker.worker_replaced
    assert reported(attacker, "REPLACED") not in ("done", "none")  # the copy is there, and read-only to it
    assert target.read_text() == "precious"
    assert honest.correct, honest.message


@needs_sandbox
def test_the_baseline_cache_is_not_writable_from_inside_the_sandbox(monkeypatch, fresh_cache):
    with _harness(fresh_cache, "required") as harness:
        state = harness._baselines.cache.root  # where the baseline cache keeps its entries
        monkeypatch.setenv("PATHS_TEST_STATE", str(state))  # before any worker starts
        verdict = harness.evaluate(candidate("state_writer"), measure=False)
    assert verdict.correct, verdict.message
    assert "STATE_WRITE=" in verdict.stdout  # it tried (under /tmp it wrote into its own, private /tmp)
    assert not (state / "planted.json").exists()


def test_a_link_where_the_referee_reads_shipped_outputs_is_tampering_named(relu_harness):
    attacker = relu_harness.evaluate(candidate("outputs_link"), measure=False)
    honest = relu_harness.evaluate(candidate("relu_scale_numpy"), measure=False)
    assert attacker.failure is Failure.CHEAT, attacker.message
    tampering = [f for f in attacker.flags if f.code == F.TAMPERING]
    assert tampering and tampering[0].blocking and "outputs is a symbolic link" in tampering[0].message
    assert honest.correct, honest.message


def _halved(document: dict) -> dict:
    """The entry with every sample of its baselines halved, anything else (a MAC) as it was."""
    payload = document.get("payload", document)
    for entry in payload["baselines"].values():
        entry["samples_ms"] = [s / 2 for s in entry["samples_ms"]]
        entry["figures"] = {t: [s / 2 for s in samples] for t, samples in entry["figures"].items()}
    return document


def _again(harness: Harness) -> None:
    """The harness reads the baseline cache again for relu_scale (a move to another problem forgets the figures
    measured earlier in the session)."""
    harness.use_problem(problem("linear_relu"))
    harness.use_problem(problem("relu_scale"))


def test_a_malformed_or_forged_baseline_cache_entry_is_measured_afresh_with_a_one_line_notice(tmp_path):
    # the test backend that stands for an accelerator: the host CPU keeps no priors (Device.prior_band)
    with _harness(tmp_path / "cache", "off", backend=TORCH_CPU_ACCELERATOR, baselines=("eager",)) as harness:
        harness.baselines()  # measured, and kept in the baseline cache
        (entry,) = [p for p in tmp_path.rglob("*.json") if "baselines" in p.parts]
        kept = json.loads(entry.read_text())
        entry.write_text('["a list", "where an object belongs"]')  # malformed
        _again(harness)
        verdict = harness.evaluate(candidate("relu_scale_numpy"))
        assert verdict.correct, verdict.message
        assert [s.origin for s in verdict.baseline_sources] == ["measured"]  # fresh figures, no prior
        malformed = dict(verdict.baseline_notes)["eager"]
        entry.write_text(json.dumps(_halved(kept)))  # forged: valid JSON, the figures changed
        _again(harness)
        harness.baselines()
        forged = harness.baseline_notes["eager"]
    for note in (malformed, forged):
        assert "was not used" in note and entry.name in note and "\n" not in note
        assert "eager: measured" in note  # measured afresh (not "from the baseline cache")


def test_the_kforge_process_reads_and_writes_nothing_by_name_in_a_workers_home(cache_dir, tmp_path):
    """A worker's own output, and the stack dump that tells compiling from hanging, once lay in its home, where a
    worker (another one, before this one started) could plant links: the KForge process appended to, truncated and
    read whatever they named."""
    import sys

    from kforge_core.harness.host.process import WorkerProcess
    from kforge_core.harness.protocol import DeviceFacts, WorkerInit

    from .helpers import QUICK

    target = tmp_path / "host-file.txt"
    target.write_text("precious")
    home = tmp_path / "worker-1"
    home.mkdir()
    for name in ("worker.out", "worker.err", "stacks.txt"):
        (home / name).symlink_to(target)
    init = WorkerInit(tuple(p for p in sys.path if p), SELECTION, TORCH_CPU.name, True, None, QUICK, cache_dir)
    worker = WorkerProcess(init, home)
    try:
        facts = worker.receive(QUICK.startup_timeout_s, "starting the worker").value
        stacks = worker.probe.stacks()
        tail = worker.worker_stderr_tail()
    finally:
        worker.close()
    assert isinstance(facts, DeviceFacts)
    assert "File " in stacks  # the dump came, through the KForge process's own file
    assert "precious" not in tail and target.read_text() == "precious"
