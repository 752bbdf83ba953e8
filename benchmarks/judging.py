"""The referee's judgement of one large shipped output, step by step, on the device it judges on: the output read
from its files into place (``output_files.read_outputs``), copied to the device, compared with the expected output
(``compare.compare_outputs``), its distance from the expected one (``compare.max_difference``, the check across
trials) and its agreement with a float64 reference (``precision.agreement_bits``). ``per-chunk waits`` is the way
every output was compared before, side by side (and a failing one still is, for its message): every chunk's figures
read back from the device before the next chunk, four waits a chunk. Alone on the device the waits cost little; beside
the other processes of an evaluation, each waits its turn. Medians of ``--repeats`` rounds; on a shared machine
compare the rows, not the seconds.

    python benchmarks/judging.py --mib 2048 --device cuda
"""

from __future__ import annotations

import argparse
import math
import statistics
import tempfile
import time
from pathlib import Path
from typing import Callable

import torch

from kforge_core.harness.worker import compare, output_files
from kforge_core.harness.worker.host_copies import host_copy
from kforge_core.harness.worker.precision import agreement_bits

TOLERANCE = (1e-2, 1e-2)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--mib", type=int, default=1024, help="the output's size (float32)")
    parser.add_argument("--device", default="cuda" if torch.cuda.is_available() else "cpu")
    parser.add_argument("--repeats", type=int, default=3)
    args = parser.parse_args()
    device = torch.device(args.device)
    expected = torch.randn(args.mib << 18, device=device)
    output = expected + 1e-4 * torch.randn_like(expected)
    exact = expected.double()[: 1 << 24]  # the float64 reference of a slice: its cost per element is what counts
    for_device = device.type != "cpu"
    seconds: dict[str, list[float]] = {}

    def timed(name: str, step: Callable[[], object]) -> object:
        _wait(device)
        start = time.perf_counter()
        value = step()
        _wait(device)
        seconds.setdefault(name, []).append(time.perf_counter() - start)
        return value

    with tempfile.TemporaryDirectory(prefix="kforge-judging-") as root:
        for number in range(args.repeats):
            paths, digests = output_files.write_outputs(Path(root) / f"{number}.out", [host_copy(output)], {})
            (on_host,), _ = timed("read into place", lambda: output_files.read_outputs(paths, digests,
                                                                                       for_device=for_device))
            judged = timed("copy to the device", lambda: on_host.to(device, non_blocking=on_host.is_pinned()))
            now = timed("compare", lambda: compare.compare_outputs([judged], [expected], [TOLERANCE]))
            before = timed("compare, per-chunk waits", lambda: _compare_waiting_per_chunk(judged, expected))
            assert now.passed and before == (now.max_abs_error, now.max_rel_error), (now, before)
            timed("max_difference", lambda: compare.max_difference([judged], [expected]))
            timed("agreement_bits (64 Mi elements)", lambda: agreement_bits(on_host[: 1 << 24], exact))
            del on_host, judged
    print(f"{args.mib} MiB float32 output on {device} ({torch.cuda.get_device_name(device) if for_device else 'host'}"
          f"), {compare.CHUNK_ELEMENTS:,} elements a chunk, median of {args.repeats}")
    for name, values in seconds.items():
        print(f"  {name:34s} {statistics.median(values):8.3f} s")


def _compare_waiting_per_chunk(out: torch.Tensor, ref: torch.Tensor) -> tuple[float, float]:
    """The comparison a chunk at a time (``compare._Tally``): each chunk's figures read back before the next."""
    tally = compare._Tally()
    for start, c, r in compare.flat_chunks(out, ref):
        tally.add(start, c, r, *TOLERANCE)
    assert tally.count == 0 and math.isfinite(tally.max_abs)
    return tally.max_abs, tally.max_rel


def _wait(device: torch.device) -> None:
    if device.type == "cuda":
        torch.cuda.synchronize(device)


if __name__ == "__main__":
    main()
