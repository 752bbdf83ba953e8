"""Fixtures for every test under tests/, and the order in which ``make test`` shares the suite's files out among its
workers (``--dist loadfile``: each file whole in one worker).

pytest-xdist hands out the files with the most tests first. The files of one or two long tests (an end-to-end
``kforge run``, a bench killed and resumed, a C++ extension built) then came last, and one worker ran the last of
them alone for a minute or more while the other had nothing left. Files holding a test marked ``slow`` are handed
out first instead, the most tests first among them as xdist would, and the others after them: what is left at the
end is files of quick tests, which even the two workers out.
"""

from __future__ import annotations

import shutil
from pathlib import Path

import pytest


def _by_file(config: pytest.Config) -> bool:
    # as given: in its workers, xdist sets the option to "no" before they collect
    given = getattr(config, "known_args_namespace", config.option)
    return "loadfile" in (getattr(config.option, "dist", None), getattr(given, "dist", None))


def pytest_configure(config: pytest.Config) -> None:
    if _by_file(config):
        config.option.loadscopereorder = False  # xdist keeps the order the workers collected (below)


def pytest_collection_modifyitems(config: pytest.Config, items: list[pytest.Item]) -> None:
    if not _by_file(config):
        return
    files: dict[str, list[pytest.Item]] = {}
    for item in items:
        files.setdefault(item.nodeid.split("::", 1)[0], []).append(item)  # xdist's unit of work under loadfile

    def order(tests: list[pytest.Item]) -> tuple[bool, int]:
        return not any(test.get_closest_marker("slow") for test in tests), -len(tests)

    items[:] = [item for tests in sorted(files.values(), key=order) for item in tests]


@pytest.fixture(scope="session")
def host_peaks(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """The host CPU's peaks, measured once for the session (copies and a GEMM, about 1.6 s) in a cache directory of
    their own: its ``peaks`` folder."""
    from kforge_core.devices import make_device
    from kforge_core.records import Backend

    cache = tmp_path_factory.mktemp("host-peaks")
    assert make_device(Backend(name="host", programming_model="-", device="cpu")).peaks(cache) is not None
    return cache / "peaks"


@pytest.fixture
def fresh_cache(tmp_path: Path, host_peaks: Path) -> Path:
    """``tmp_path / "cache"``: a cache directory of this test's own that holds nothing but the host CPU's peaks, as a
    user's cache does after KForge's first run there. Empty, it had every test's first worker measure them again
    while the others waited for it; a test about their measurement uses a directory of its own instead."""
    cache = tmp_path / "cache"
    shutil.copytree(host_peaks, cache / "peaks")
    return cache
