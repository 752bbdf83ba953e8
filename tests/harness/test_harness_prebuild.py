"""Building ahead: while one candidate is evaluated, the next ones build in child processes of their own
(``kforge_prebuild``), and their compile stage finds the builds done."""

from __future__ import annotations

import dataclasses
import json
import os
import time

import pytest
from click.testing import CliRunner

from kforge_core.app import App
from kforge_core.cli import cli
from kforge_core.harness import Harness
from kforge_core.harness.host.prebuild import Prebuilder
from kforge_core.plugins import PluginSelection
from kforge_core.records import Candidate

from .helpers import CANDIDATES, PLUGIN_MODULE, PROBLEMS, problem, settings_for
from .prebuild_plugin import AHEAD, JIT, mark

PREBUILD_PLUGIN = "harness.prebuild_plugin"
SELECTION = PluginSelection(entry_points=False, modules=(PREBUILD_PLUGIN,))
SOURCE = (CANDIDATES / "relu_scale_numpy.py").read_text()


def variants(count: int, extra: str = "") -> list[Candidate]:
    """Distinct candidates (distinct digests) that all compute the right answer."""
    return [Candidate.from_source(f"{SOURCE}\n# variant {i}{extra}\n", label=f"variant-{i}") for i in range(count)]


@pytest.fixture
def harness_for(fresh_cache):
    made: list[Harness] = []

    def make(backend, **changes) -> Harness:
        settings = settings_for(fresh_cache, spare_workers=0, baselines=(), **changes)
        harness = Harness(backend=backend, problem=problem("relu_scale"), settings=settings, plugins=SELECTION)
        made.append(harness)
        return harness

    yield make
    for harness in made:
        harness.close()


def test_later_candidates_build_ahead_in_their_own_processes(harness_for, tmp_path):
    # processes are told apart by their pids, the same in every sandbox; both builds start at once (with one at a
    # time, the third candidate's build has not begun when a quickly started worker gets to it, and is dropped)
    harness = harness_for(AHEAD, sandbox="off", prebuild_jobs=2)
    candidates = variants(3)
    verdicts = list(harness.evaluate_all(candidates, measure=False))
    assert [v.correct for v in verdicts] == [True, True, True], [v.message for v in verdicts]
    # the first is built by its worker at once; the other two were built ahead and found so
    assert verdicts[0].compile.log.startswith("built now") and not verdicts[0].compile.cached
    for verdict in verdicts[1:]:
        assert verdict.compile.log.startswith("found built ahead") and verdict.compile.cached
    assert sorted(o.digest for o in harness.prebuilds) == sorted(c.digest for c in candidates[1:])
    assert all(o.result is not None and o.result.ok and o.result.log == "built ahead" for o in harness.prebuilds)
    builders = {int(mark(tmp_path / "cache", c.digest).read_text()) for c in candidates[1:]}
    workers = {int(v.compile.log.split("pid ")[1].rstrip(")")) for v in verdicts}
    assert len(builders) == 2 and not builders & workers and os.getpid() not in builders | workers
    assert not mark(tmp_path / "cache", candidates[0].digest).exists()


def test_a_hanging_build_is_killed_at_the_compile_timeout_and_the_candidate_still_evaluates(harness_for, tmp_path):
    harness = harness_for(AHEAD, compile_timeout_s=3, sandbox="off")  # the pid it writes down is the host's
    first, hanging = variants(1)[0], variants(1, " PREBUILD_HANG")[0]
    verdicts = list(harness.evaluate_all([first, hanging], measure=False))
    assert [v.correct for v in verdicts] == [True, True]
    assert verdicts[1].compile.log.startswith("built now")  # the compile stage built it itself
    (outcome,) = harness.prebuilds
    assert outcome.result is None and "ran past the compile timeout (3 s)" in outcome.error
    pid = int(mark(tmp_path / "cache", hanging.digest).with_suffix(".hanging").read_text())
    deadline = time.monotonic() + 10
    while _alive(pid) and time.monotonic() < deadline:
        time.sleep(0.1)
    assert not _alive(pid), "the hanging build process was left running"


def test_a_backend_with_nothing_to_build_ahead_starts_one_build_process_only(harness_for):
    harness = harness_for(JIT, prebuild_jobs=1)
    verdicts = list(harness.evaluate_all(variants(4), measure=False))
    assert all(v.correct for v in verdicts)
    assert len(harness.prebuilds) == 1 and harness.prebuilds[0].result is None and not harness.prebuilds[0].error


def test_prebuild_jobs_0_builds_nothing_ahead(harness_for):
    harness = harness_for(AHEAD, prebuild_jobs=0)
    verdicts = list(harness.evaluate_all(variants(2), measure=False))
    assert [v.compile.log.split(" (")[0] for v in verdicts] == ["built now", "built now"]
    assert harness.prebuilds == []


def test_a_candidate_evaluated_before_its_build_started_is_not_built_twice(harness_for):
    harness = harness_for(AHEAD, prebuild_jobs=1)
    first, second = variants(2)
    harness.prebuild([first, second])
    verdict = harness.evaluate(second, measure=False)  # waits for its own build, or takes it off the queue
    assert verdict.correct
    assert [o.digest for o in harness.prebuilds].count(second.digest) <= 1


def _prebuilder(harness: Harness, root) -> Prebuilder:
    """A Prebuilder as the harness makes it, for the tests of holding builds."""
    return Prebuilder(harness._prebuild_request, root, harness.settings.harness, host_cpu=True,
                      cache_dir=harness.settings.cache_dir, enabled=True)


def test_while_held_no_build_starts_and_queued_builds_start_after(harness_for, tmp_path):
    harness = harness_for(AHEAD)
    prebuilder = _prebuilder(harness, tmp_path / "builds")
    (candidate,) = variants(1)
    with prebuilder.held():
        prebuilder.start([candidate])
        time.sleep(1.0)  # long enough for a build process to start and finish, were it let
        released = time.time()
    outcome = prebuilder.wait(candidate)
    prebuilder.close()
    assert outcome is not None and outcome.result is not None and outcome.result.ok, outcome
    ended = float(mark(tmp_path / "cache", candidate.digest).with_suffix(".ended").read_text())
    assert ended > released


def test_a_hold_waits_for_the_running_build_to_finish(harness_for, tmp_path):
    harness = harness_for(AHEAD)
    prebuilder = _prebuilder(harness, tmp_path / "builds")
    (slow,) = variants(1, " PREBUILD_SLOW")
    prebuilder.start([slow])
    started = mark(tmp_path / "cache", slow.digest).with_suffix(".started")
    deadline = time.monotonic() + 60
    while not started.exists() and time.monotonic() < deadline:
        time.sleep(0.05)
    assert started.exists(), "the slow build did not start"
    with prebuilder.held():
        assert mark(tmp_path / "cache", slow.digest).with_suffix(".ended").exists()
    prebuilder.close()


def test_on_the_host_cpu_timed_runs_are_held_apart_from_builds(harness_for, tmp_path):
    harness = harness_for(AHEAD, prebuild_jobs=2)
    candidates = variants(1) + variants(2, " PREBUILD_SLOW")
    verdicts = list(harness.evaluate_all(candidates))
    assert all(v.correct and v.runtime is not None for v in verdicts), [v.message for v in verdicts]
    assert all(v.compile.cached for v in verdicts[1:])


def test_kforge_eval_takes_several_candidates(tmp_path, monkeypatch, fresh_cache):
    monkeypatch.chdir(tmp_path)
    monkeypatch.setenv("KFORGE_CACHE_DIR", str(fresh_cache))
    monkeypatch.setenv("KFORGE_HARNESS__SPARE_WORKERS", "0")
    paths = []
    for candidate in variants(2):
        path = tmp_path / f"{candidate.label}.py"
        path.write_text(candidate.files[0].text)
        paths.append(str(path))
    paths.append(str(CANDIDATES / "mismatch.py"))
    app = App(load_plugins=False, plugin_modules=(PREBUILD_PLUGIN, PLUGIN_MODULE))
    args = ["eval", str(PROBLEMS / "relu_scale.py"), *paths, "--backend", AHEAD.name, "--trials", "2", "--json",
            "--no-timing"]
    result = CliRunner().invoke(cli, args, obj=app, catch_exceptions=False)
    assert result.exit_code == 3, result.output  # one of them is not correct
    documents = json.loads(result.stdout)
    assert [d["candidate"] for d in documents] == ["variant-0", "variant-1", "mismatch"]
    assert [d["correct"] for d in documents] == [True, True, False]
    assert documents[1]["compile"]["cached"] is True


def _alive(pid: int) -> bool:
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    try:  # a zombie no longer runs
        with open(f"/proc/{pid}/stat") as stat:
            return stat.read().split()[2] != "Z"
    except OSError:
        return False


def test_settings_reject_a_negative_number_of_jobs():
    from kforge_core.settings import HarnessSettings

    with pytest.raises(ValueError, match="prebuild_jobs"):
        dataclasses.replace(HarnessSettings(), prebuild_jobs=-1)


def test_the_verdict_line_says_what_building_ahead_did():
    from kforge_core.harness.host.prebuild import PrebuildOutcome
    from kforge_core.records import CompileResult, Failure

    built = CompileResult(ok=True, log="model_new.py:90: load_inline built in 41.10 s")
    assert PrebuildOutcome("d", 41.23, built).describe() == \
        "building ahead took 41.2 s: model_new.py:90: load_inline built in 41.10 s"
    nothing = CompileResult(ok=True, log="no load_inline source to build ahead (the compile stage builds it)")
    assert PrebuildOutcome("d", 0.5, nothing).describe() == \
        "building ahead took 0.5 s: no load_inline source to build ahead (the compile stage builds it)"
    assert PrebuildOutcome("d", 0.2, CompileResult(ok=True, cached=True)).describe() == "found in the build cache"
    failing = CompileResult(ok=False, log="main.cpp:4:57: error: 'k' was not declared\nmore", failure=Failure.COMPILE)
    assert PrebuildOutcome("d", 30.0, failing).describe() == \
        "building ahead took 30.0 s, failing: main.cpp:4:57: error: 'k' was not declared"
    assert PrebuildOutcome("d", 600.0, error="the build process ran past the compile timeout (600 s)\ntail").describe() \
        == "the build ahead failed after 600.0 s: the build process ran past the compile timeout (600 s)"
    assert PrebuildOutcome("d", 0.1).describe() == ""  # no plugin builds ahead for the backend
