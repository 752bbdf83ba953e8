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
