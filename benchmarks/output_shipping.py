"""Shipping a call's outputs to the referee, step by step: the candidate's worker writes them
(``output_files.write_outputs``), the referee reads and digests them (``read_outputs``), here side by side with
the same read into zero-filled ``bytearray`` memory (what the referee did before it read into fresh anonymous
mappings). Medians of ``--repeats`` rounds; on a shared machine compare the two reads, not the seconds.

    python benchmarks/output_shipping.py --mib 1024
"""

from __future__ import annotations

import argparse
import statistics
import tempfile
import time
from pathlib import Path

import torch

from kforge_core.harness.worker import output_files


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--mib", type=int, default=1024, help="the output's size")
    parser.add_argument("--repeats", type=int, default=5)
    args = parser.parse_args()
    output = torch.rand(args.mib << 18)  # float32: MiB * 2**20 / 4 elements
    fresh_memory = output_files._fresh_memory
    seconds: dict[str, list[float]] = {"write": [], "read (mapping)": [], "read (bytearray)": []}
    with tempfile.TemporaryDirectory(prefix="kforge-shipping-") as root:
        for number in range(args.repeats):
            for how, memory in (("read (mapping)", fresh_memory), ("read (bytearray)", bytearray)):
                start = time.perf_counter()
                paths, digests = output_files.write_outputs(Path(root) / f"{number}-{len(how)}.out", [output], {})
                seconds["write"].append(time.perf_counter() - start)
                output_files._fresh_memory = memory
                try:
                    start = time.perf_counter()
                    (read,), _ = output_files.read_outputs(paths, digests)
                    seconds[how].append(time.perf_counter() - start)
                finally:
                    output_files._fresh_memory = fresh_memory
                assert torch.equal(read, output)
                del read
    for step, values in seconds.items():
        print(f"{step:18s} median {statistics.median(values):.3f} s  ({', '.join(f'{v:.2f}' for v in values)})")
    mapping, plain = (statistics.median(seconds[k]) for k in ("read (mapping)", "read (bytearray)"))
    print(f"{args.mib} MiB: the read into a mapping takes {mapping / plain:.2f}x the read into a bytearray")


if __name__ == "__main__":
    main()
