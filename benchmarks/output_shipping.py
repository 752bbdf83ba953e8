"""Shipping a call's outputs to the referee, step by step: the candidate's worker writes them
(``output_files.write_outputs``), the referee reads and digests them (``read_outputs``), with the parts of the
size shipping uses (``output_files.PART_BYTES``) side by side with parts of other sizes (``--part-mib``). Parts are
written, read and digested in threads side by side, and the digest (SHA-256, about 1 GB/s on one core) is most of
the time, so smaller parts keep more cores busy. The referee reads each piece straight into its place in the
output; ``read-copy`` is the way it read before, side by side: each part into memory of its own, then the pieces
copied into the output (and that memory handed back). Medians of ``--repeats`` rounds; on a shared machine compare
the rows, not the seconds.

    python benchmarks/output_shipping.py --mib 2048 --part-mib 256
"""

from __future__ import annotations

import argparse
import hashlib
import io
import mmap
import os
import statistics
import struct
import tempfile
import time
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path

import torch

from kforge_core.harness.worker import output_files
from kforge_core.harness.worker.host_copies import host_empty


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
                paths, digests = output_files.write_outputs(Path(root) / f"{number}-{size}.again", [output], {},
                                                            piece_bytes=size)
                start = time.perf_counter()
                read = _read_then_copy(paths, digests, for_device)
                seconds.setdefault((size, "read-copy"), []).append(time.perf_counter() - start)
                assert torch.equal(read, output)
                del read
    print(f"{args.mib} MiB output, {os.cpu_count()} cores, outputs read into "
          f"{'page-locked' if for_device else 'pageable'} memory")
    for (size, step), values in seconds.items():
        used = " (shipping's)" if size == output_files.PART_BYTES else ""
        print(f"parts of {size >> 20:4d} MiB{used:13s} {step:9s} median {statistics.median(values):.3f} s  "
              f"({', '.join(f'{v:.2f}' for v in values)})")


def _read_then_copy(paths: tuple[Path, ...], digests: tuple[str, ...], for_device: bool) -> torch.Tensor:
    """One output read as the referee read it before: each part whole into fresh memory and digested there, then
    its pieces copied into the output; the parts' memory is handed back before this returns."""
    def read_part(path: Path, digest: str) -> list[torch.Tensor]:
        with path.open("rb", buffering=0) as file:
            data = mmap.mmap(-1, os.fstat(file.fileno()).st_size, flags=mmap.MAP_PRIVATE | mmap.MAP_ANONYMOUS)
            view, read = memoryview(data), 0
            while read < len(data) and (count := file.readinto(view[read:])):
                read += count
            del view
        path.unlink()
        assert hashlib.sha256(data).hexdigest() == digest
        (length,) = struct.unpack_from("<Q", data, len(output_files.MAGIC))
        offset = len(output_files.MAGIC) + 8
        header = torch.load(io.BytesIO(bytes(data[offset:offset + length])), weights_only=True)
        offset += length
        pieces = []
        for name, numel in header["pieces"]:
            dtype = getattr(torch, name)
            pieces.append(torch.frombuffer(data, dtype=torch.uint8, count=numel * dtype.itemsize,
                                           offset=offset).view(dtype))
            offset += numel * dtype.itemsize
        return pieces

    with ThreadPoolExecutor(max_workers=os.cpu_count()) as pool:
        parts = list(pool.map(read_part, paths, digests))
    chunks = [piece for part in parts for piece in part]
    whole = torch.cat(chunks, out=host_empty(sum(c.numel() for c in chunks), chunks[0].dtype, for_device=for_device))
    del parts, chunks
    return whole


if __name__ == "__main__":
    main()
