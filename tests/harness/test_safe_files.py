"""Opening files where a worker writes without following its links (``harness/safe_files.py``), both ways: through
``openat2`` where the kernel has it, and one component at a time with ``O_NOFOLLOW`` elsewhere."""

from __future__ import annotations

import os
import threading
from pathlib import Path

import pytest

from kforge_core.harness import safe_files as S
from kforge_core.harness.worker.output_files import OutputsPlace, UnreadableOutputs, read_outputs, write_outputs

WAYS = [pytest.param(True, id="openat2"), pytest.param(False, id="per-component")]


@pytest.fixture
def tree(tmp_path: Path) -> tuple[Path, Path]:
    """``anchor/box`` (what a worker writes) beside ``host.txt`` (what it must never reach through the host)."""
    anchor = tmp_path / "anchor"
    (anchor / "box" / "inner").mkdir(parents=True)
    (anchor / "box" / "inner" / "file.txt").write_text("the worker's")
    host = tmp_path / "host.txt"
    host.write_text("precious")
    return anchor, host


@pytest.mark.parametrize("openat2", WAYS)
def test_a_link_at_the_end_or_on_the_way_is_refused_and_named(tree, openat2):
    anchor, host = tree
    if openat2 and not S.openat2_available():
        pytest.skip("this kernel has no openat2")
    fd = S.open_beneath(anchor, "box/inner/file.txt", use_openat2=openat2)
    assert os.read(fd, 100) == b"the worker's"
    os.close(fd)
    (anchor / "box" / "link.txt").symlink_to(host)
    (anchor / "box" / "dir-link").symlink_to(anchor / "box" / "inner")
    with pytest.raises(S.PlantedLink, match="box/link.txt is a symbolic link"):
        S.open_beneath(anchor, "box/link.txt", use_openat2=openat2)
    with pytest.raises(S.PlantedLink, match="box/dir-link is a symbolic link") as raised:
        S.open_beneath(anchor, "box/dir-link/file.txt", use_openat2=openat2)
    assert raised.value.path == anchor / "box" / "dir-link"
    with pytest.raises(ValueError):
        S.open_beneath(anchor, "box/../../host.txt", use_openat2=openat2)
    with pytest.raises(FileNotFoundError):
        S.open_beneath(anchor, "box/missing.txt", use_openat2=openat2)


def test_only_a_regular_file_with_one_name_is_read(tree):
    anchor, host = tree
    os.link(anchor / "box" / "inner" / "file.txt", anchor / "box" / "second-name.txt")
    with pytest.raises(S.PlantedLink, match="hard link"):
        S.read_beneath(anchor, "box/second-name.txt")
    os.mkfifo(anchor / "box" / "fifo")
    result: list[BaseException] = []

    def read_fifo() -> None:  # a FIFO with no writer would block a plain open for ever
        try:
            S.read_beneath(anchor, "box/fifo")
        except BaseException as exc:  # noqa: BLE001
            result.append(exc)

    reader = threading.Thread(target=read_fifo, daemon=True)
    reader.start()
    reader.join(5)
    assert not reader.is_alive() and isinstance(result[0], S.PlantedLink)


def test_a_file_is_created_in_place_of_a_link_never_through_it(tree):
    anchor, host = tree
    (anchor / "box" / "stdout.txt").symlink_to(host)
    with S.create_beneath(anchor, "box/stdout.txt") as out:
        out.write(b"kept output")
    assert host.read_text() == "precious"
    assert not (anchor / "box" / "stdout.txt").is_symlink()
    assert (anchor / "box" / "stdout.txt").read_text() == "kept output"
    (anchor / "box" / "gone").symlink_to(host)
    S.unlink_beneath(anchor, "box/gone")
    assert host.exists() and not os.path.lexists(anchor / "box" / "gone")


def test_a_taken_file_is_read_once_and_a_link_is_not_taken(tree):
    anchor, host = tree
    fd = S.take_beneath(anchor, "box/inner/file.txt")
    assert os.read(fd, 100) == b"the worker's" and not (anchor / "box" / "inner" / "file.txt").exists()
    os.close(fd)
    (anchor / "box" / "inner" / "file.txt").symlink_to(host)
    with pytest.raises(S.PlantedLink):
        S.take_beneath(anchor, "box/inner/file.txt")
    assert host.read_text() == "precious"


def test_the_referee_reads_shipped_outputs_only_in_the_candidates_outputs_folder(tmp_path):
    import torch

    anchor = tmp_path / "workers"
    outputs = anchor / "worker-1" / "candidates" / "0001-c" / "outputs"
    outputs.mkdir(parents=True)
    place = OutputsPlace(anchor, "worker-1/candidates/0001-c/outputs")
    paths, digests = write_outputs(outputs / "00001.pt", [torch.ones(3)], {})
    read, _ = read_outputs(paths, digests, place=place)
    assert torch.equal(read[0], torch.ones(3)) and not paths[0].exists()  # read once, removed
    elsewhere = tmp_path / "other-problem.pt"  # a file of the candidate's choosing, outside its folder
    paths, digests = write_outputs(elsewhere, [torch.ones(3)], {})
    with pytest.raises(UnreadableOutputs) as raised:
        read_outputs(paths, digests, place=place)
    assert raised.value.changed and str(elsewhere) in raised.value.evidence and elsewhere.exists()
    paths, digests = write_outputs(tmp_path / "real.pt", [torch.ones(3)], {})
    (outputs / "00002.pt").symlink_to(paths[0])
    with pytest.raises(UnreadableOutputs) as raised:
        read_outputs((outputs / "00002.pt",), digests, place=place)
    assert raised.value.changed and "00002.pt is a symbolic link" in raised.value.evidence
