"""Shipping a call's outputs to the referee, step by step: the candidate's worker writes them
(``output_files.write_outputs``), the referee reads and digests them (``read_outputs``), with the parts of the
size shipping uses (``output_files.PART_BYTES``) side by side with parts of other sizes (``--part-mib``). Parts are
written, read and digested in threads side by side, and the digest (SHA-256, about 1 GB/s on one core) is most of
the time, so smaller parts keep more cores busy. Medians of ``--repeats`` rounds; on a shared machine compare the
part sizes, not the seconds.

    python benchmarks/output_shipping.py --mib 2048 --part-mib 256
"""

from __future__ import annotations

import argparse
import os
import statistics
import tempfile
import time
from pathlib import Path

import torch

from kforge_core.harness.worker import output_files


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--mib", type=int, default=1024, help="the output's size")
    parser.add_argument("--part-mib", type=int, nargs="*", default=[256], help="other part sizes to compare")
    parser.add_argument("--repeats", type=int, default=5)
    args = parser.parse_args()
    output = torch.rand(args.mib << 18)  # float32: MiB * 2**20 / 4 elements
    for_device = hasattr(torch, "accelerator") and torch.accelerator.is_available()  # as the referee of a GPU
    sizes = [output_files.PART_BYTES] + [mib << 20 for mib in args.part_mib if mib << 20 != output_files.PART_BYTES]
    seconds: dict[tuple[int, str], list[float]] = {}
    with tempfile.TemporaryDirectory(prefix="kforge-shipping-") as root:
        for number in range(args.repeats):
            for size in sizes:
                start = time.perf_counter()
                paths, digests = output_files.write_outputs(Path(root) / f"{number}-{size}.out", [output], {},
                                                            piece_bytes=size)
                seconds.setdefault((size, "write"), []).append(time.perf_counter() - start)
                start = time.perf_counter()
                (read,), _ = output_files.read_outputs(paths, digests, for_device=for_device)
                seconds.setdefault((size, "read"), []).append(time.perf_counter() - start)
                assert torch.equal(read, output)
                del read
    print(f"{args.mib} MiB output, {os.cpu_count()} cores, pieces put together in "
          f"{'page-locked' if for_device else 'pageable'} memory")
    for (size, step), values in seconds.items():
        used = " (shipping's)" if size == output_files.PART_BYTES else ""
        print(f"parts of {size >> 20:4d} MiB{used:13s} {step:5s} median {statistics.median(values):.3f} s  "
              f"({', '.join(f'{v:.2f}' for v in values)})")


if __name__ == "__main__":
    main()
