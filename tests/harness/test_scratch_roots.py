"""The scratch roots a killed KForge process leaves behind are removed by the next one, and nothing else is."""

from __future__ import annotations

import os
import subprocess
import sys
import textwrap

import pytest

from kforge_core.harness.host import scratch_roots
from kforge_core.harness.host.scratch_roots import OWNER_FILE, PREFIX, make_scratch_root, sweep_abandoned


def _root_of_an_ended_process(directory) -> str:
    """A scratch root made by a process that then ended without removing it, as a killed run's is."""
    code = textwrap.dedent(f"""
        import importlib.util, tempfile
        tempfile.tempdir = {str(directory)!r}
        spec = importlib.util.spec_from_file_location("scratch_roots", {scratch_roots.__file__!r})
        module = importlib.util.module_from_spec(spec)
        spec.loader.exec_module(module)  # the module alone: a killed KForge process, without torch's start-up
        root = module.make_scratch_root()
        (root / "workers").mkdir()
        (root / "workers" / "built.so").write_bytes(b"x" * 1024)
        print(root)
    """)
    made = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True)
    return made.stdout.strip()


def _root(directory, name: str, owner: str | None):
    root = directory / f"{PREFIX}{name}"
    root.mkdir()
    if owner is not None:
        (root / OWNER_FILE).write_text(owner)
    return root


def test_a_root_whose_process_ended_is_swept_and_a_live_ones_is_not(tmp_path):
    ended = _root_of_an_ended_process(tmp_path)
    live = _root(tmp_path, "live", scratch_roots._owner_line(os.getpid()))
    assert sweep_abandoned(tmp_path) == [tmp_path / os.path.basename(ended)]
    assert not os.path.exists(ended) and live.is_dir()


def test_a_pid_used_again_by_another_process_does_not_keep_a_root(tmp_path):
    _, started, namespace = scratch_roots._owner_line(os.getpid()).split()
    if started == scratch_roots.UNKNOWN:
        pytest.skip("no /proc here: a live pid keeps its root whoever holds it now")
    reused = _root(tmp_path, "reused", f"{os.getpid()} {int(started) - 1} {namespace}\n")
    assert sweep_abandoned(tmp_path) == [reused]


def test_what_kforge_did_not_make_as_its_own_is_left_alone(tmp_path):
    _, started, namespace = scratch_roots._owner_line(os.getpid()).split()
    dead = 2 ** 22 + 1  # above Linux's largest pid
    no_owner = _root(tmp_path, "older", None)
    other_namespace = _root(tmp_path, "container", f"{dead} {started} pid:[1]\n")
    malformed = _root(tmp_path, "malformed", f"{dead}\n")
    too_long = _root(tmp_path, "long", f"{dead} {started} {namespace}" + " " * 300 + "\n")
    target = tmp_path / "elsewhere"
    target.mkdir()
    (target / OWNER_FILE).write_text(f"{dead} {started} {namespace}\n")
    (tmp_path / f"{PREFIX}link").symlink_to(target)
    unrelated = tmp_path / "other-abandoned"
    unrelated.mkdir()
    (unrelated / OWNER_FILE).write_text(f"{dead} {started} {namespace}\n")
    assert sweep_abandoned(tmp_path) == []
    assert all(p.is_dir() for p in (no_owner, other_namespace, malformed, too_long, target, unrelated))


def test_a_new_root_names_its_owner_and_sweeps_first(tmp_path, monkeypatch):
    ended = _root_of_an_ended_process(tmp_path)
    monkeypatch.setattr("tempfile.tempdir", str(tmp_path))
    root = make_scratch_root()
    assert root.parent == tmp_path and root.name.startswith(PREFIX)
    assert (root / OWNER_FILE).read_text().split()[0] == str(os.getpid())
    assert not os.path.exists(ended)
