"""A shipped call's outputs in files within the worker's file-size limit, and read back only as written."""

from __future__ import annotations

import pytest
import torch

from kforge_core.harness.worker.output_files import UnreadableOutputs, read_outputs, write_outputs


def test_outputs_larger_than_a_part_are_cut_into_parts_and_put_back_together(tmp_path):
    big, small = torch.randn(64, 1000), torch.arange(6).reshape(2, 3)
    paths, digests = write_outputs(tmp_path / "00001.pt", [big, 7, small], {"args[0]": torch.ones(3)},
                                   piece_bytes=64 << 10)
    assert len(paths) == 4 and all(p.stat().st_size < 2 * (64 << 10) for p in paths)
    assert torch.serialization.get_crc32_options()  # turned off for the harness's own save only
    outputs, inputs = read_outputs(paths, digests)
    assert not any(path.exists() for path in paths)  # read once, then gone: a suite's outputs do not pile up
    assert torch.equal(outputs[0], big) and outputs[1] == 7 and torch.equal(outputs[2], small)
    assert torch.equal(inputs["args[0]"], torch.ones(3))


@pytest.mark.parametrize("damage", ["change", "remove", "drop", "digest"])
def test_a_part_changed_removed_or_left_out_is_unreadable(tmp_path, damage):
    paths, digests = write_outputs(tmp_path / "00001.pt", [torch.randn(64, 1000)], {}, piece_bytes=64 << 10)
    if damage == "change":
        paths[2].write_bytes(paths[2].read_bytes()[:-1] + b"x")
    elif damage == "remove":
        paths[3].unlink()
    elif damage == "drop":
        paths, digests = paths[:-1], digests[:-1]
    else:
        digests = digests[:-1]
    with pytest.raises(UnreadableOutputs) as raised:
        read_outputs(paths, digests)
    assert raised.value.changed is (damage == "change")


def test_every_dtype_comes_back_bit_for_bit(tmp_path):
    values = [torch.randn(5, 7).to(torch.bfloat16), torch.tensor([True, False, True]),
              torch.randn(3, dtype=torch.cfloat), torch.randn(4, 4).t(), torch.empty(0, 3), torch.arange(10, dtype=torch.int64)[::2], None, 2.5]
    paths, digests = write_outputs(tmp_path / "00001.pt", values, {}, piece_bytes=64)
    outputs, _ = read_outputs(paths, digests)
    for sent, back in zip(values, outputs):
        if isinstance(sent, torch.Tensor):
            assert back.dtype == sent.dtype and back.shape == sent.shape and torch.equal(back, sent)
        else:
            assert back == sent


def test_a_file_the_worker_wrote_otherwise_is_unreadable_even_with_its_digest(tmp_path):
    # the candidate's process writes these files: one it made itself, with a digest to match, is still refused
    import hashlib
    import io

    from kforge_core.harness.worker.output_files import MAGIC

    def forged(header: dict, tail: bytes) -> tuple[tuple, tuple]:
        buffer = io.BytesIO()
        torch.save(header, buffer)
        data = MAGIC + len(buffer.getvalue()).to_bytes(8, "little") + buffer.getvalue() + tail
        path = tmp_path / "forged.pt"
        path.write_bytes(data)
        return (path,), (hashlib.sha256(data).hexdigest(),)

    layout = {"outputs": [{"shape": [4], "pieces": 1}], "inputs": {}}
    cases = [({"pieces": [("float32", 4)], "layout": layout, "parts": 1}, b"\0" * 8),  # shorter than it says
             ({"pieces": [("float32", 1)], "layout": layout, "parts": 1}, b"\0" * 8),  # bytes left over
             ({"pieces": [("__import__", 1)], "layout": layout, "parts": 1}, b"\0" * 4),  # not a dtype
             ({"pieces": [("float32", 4)], "layout": layout, "parts": 2}, b"\0" * 16),  # parts missing
             ({"pieces": [("float32", 4)], "layout": {"outputs": [{"shape": [-2, -2], "pieces": 1}], "inputs": {}},
               "parts": 1}, b"\0" * 16)]  # a shape of negative sizes, whose product is right
    for header, tail in cases:
        with pytest.raises(UnreadableOutputs):
            read_outputs(*forged(header, tail))
    outputs, _ = read_outputs(*forged({"pieces": [("float32", 4)], "layout": layout, "parts": 1}, b"\0" * 16))
    assert torch.equal(outputs[0], torch.zeros(4))


READ_IN_PLACE = r'''
import gc, resource, sys, torch
from pathlib import Path
from kforge_core.harness.worker.output_files import read_outputs, write_outputs
output = torch.rand(48 << 20)  # 192 MiB of float32
paths, digests = write_outputs(Path(sys.argv[1]) / "00001.pt", [output], {}, piece_bytes=16 << 20)
sample = output[::4099].clone()
del output
gc.collect()
before = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss
(read,), _ = read_outputs(paths, digests)
grew = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss - before
assert torch.equal(read[::4099], sample) and read.shape == (48 << 20,)
print(grew // 1024)
'''


def test_a_shipped_output_is_read_into_its_place_without_a_second_copy(tmp_path):
    # the referee holds one copy of an output while it reads it: each piece goes straight into its place (pieces
    # read into memory of their own and put together afterwards held the output twice, and took longer)
    import subprocess
    import sys

    finished = subprocess.run([sys.executable, "-c", READ_IN_PLACE, str(tmp_path)], capture_output=True, text=True,
                              check=True)
    grew_mib = int(finished.stdout.split()[-1])
    assert grew_mib < 96, f"reading a 192 MiB output raised the peak memory by {grew_mib} MiB"
