"""The baseline cache takes no figure on a candidate's word: entries authenticated with a key workers never see,
and any entry that is unreadable, malformed or not authenticated is measured afresh with a one-line notice."""

from __future__ import annotations

import json
import os
import stat

import pytest

from kforge_core.harness.host.baseline_cache import KEY_FILE, BaselineCache, BaselineKey
from kforge_core.harness.protocol import DeviceFacts
from kforge_core.harness.verdict import TimingMethod
from kforge_core.settings import HarnessSettings

METHOD = TimingMethod(device="toy", warmup=1, repetitions=2, l2_flush_bytes=0, synchronize="none", timer="wall",
                      fresh_inputs=True)
KEY = BaselineKey.of("p1", DeviceFacts("toy", "Toy T1", 0, "2.x", 1), HarnessSettings(), host_cpu=False)
FIGURES = (("wall", (3.0, 4.0)),)


def _written(tmp_path) -> BaselineCache:
    cache = BaselineCache(tmp_path / "baselines")
    cache.write(KEY, {"eager": (FIGURES, METHOD)}, at=1234.0)
    return cache


def test_an_entry_is_authenticated_and_its_key_is_the_users_alone(tmp_path):
    cache = _written(tmp_path)
    found = cache.read(KEY)
    assert found.notice == "" and found.baselines["eager"].samples_ms == (3.0, 4.0)
    key = cache.root / KEY_FILE
    assert stat.S_IMODE(key.stat().st_mode) == 0o600 and len(key.read_bytes()) == 32
    assert stat.S_IMODE(cache.root.stat().st_mode) == 0o700


@pytest.mark.parametrize("damage, why", [
    (lambda entry, key: entry.write_text("{not json"), "it is not JSON"),
    (lambda entry, key: entry.write_text('["a", "list"]'), "a list where an object was expected"),
    (lambda entry, key: entry.write_text('{"format": 2, "mac": "00", "payload": {}}'), "its MAC does not match"),
    (lambda entry, key: key.unlink(), "no key authenticates it"),
    (lambda entry, key: key.chmod(0o644), "is not usable"),
    (lambda entry, key: (entry.unlink(), entry.symlink_to(key)), "could not be read"),
])
def test_an_entry_that_is_not_the_caches_is_not_used_and_says_why_in_one_line(tmp_path, damage, why):
    cache = _written(tmp_path)
    damage(cache.root / KEY.file_name, cache.root / KEY_FILE)
    found = cache.read(KEY)
    assert found.baselines == {} and why in found.notice and "\n" not in found.notice
    assert KEY.file_name in found.notice and found.notice.endswith("measured afresh")


def test_a_forged_figure_is_refused_and_the_next_write_replaces_the_entry(tmp_path):
    cache = _written(tmp_path)
    entry = cache.root / KEY.file_name
    document = json.loads(entry.read_text())
    document["payload"]["baselines"]["eager"]["samples_ms"] = [0.001, 0.001]  # a faster baseline, a larger speedup
    entry.write_text(json.dumps(document))
    assert "its MAC does not match" in cache.read(KEY).notice
    cache.write(KEY, {"compile": (FIGURES, METHOD)})
    found = cache.read(KEY)
    assert found.notice == "" and set(found.baselines) == {"compile"}  # the forged eager figure is gone


def test_a_key_that_is_not_the_users_alone_is_replaced_when_the_cache_next_writes(tmp_path):
    cache = _written(tmp_path)
    key = cache.root / KEY_FILE
    key.chmod(0o644)
    cache.write(KEY, {"eager": (FIGURES, METHOD)})
    assert stat.S_IMODE(key.stat().st_mode) == 0o600 and cache.read(KEY).notice == ""
    assert os.stat(key).st_uid == os.getuid()


def test_a_state_directory_where_workers_write_is_refused(tmp_path):
    from kforge_core.errors import KForgeError
    from kforge_core.harness import Harness

    from .helpers import SELECTION, TORCH_CPU, problem, settings_for

    settings = settings_for(tmp_path / "cache")
    settings = type(settings)(**{**settings.__dict__, "state_dir": tmp_path / "cache" / "state"})
    with pytest.raises(KForgeError, match="lies in the cache directory"):
        Harness(backend=TORCH_CPU, problem=problem("relu_scale"), settings=settings, plugins=SELECTION)
