"""A shipped call's outputs on disk: written by the candidate's worker in files no larger than that process may
write (its ``RLIMIT_FSIZE``, ``harness.file_size_limit_mb``), each with its SHA-256; read back by the referee, which
checks every digest before it believes a byte, and removes each file as it reads it: a file is read once, and a
suite's shipped outputs do not pile up on disk (a problem with 2 GB outputs ships nine calls of them), nor wait in
the page cache to be written out.

An output of gigabytes (a KernelBench level-1 problem's 32768 x 32768 matmul is 4 GiB) is cut into flat pieces that
fill parts of at most half the limit; the first part also holds the layout that puts the pieces back together. A
part holds a small header (``torch.save``, read back with ``weights_only``) and then the pieces' bytes as they lie in
memory: nothing is serialized twice, and the referee's tensors are views of the bytes it read and digested. The
parts are written, read and digested in threads side by side.
"""

from __future__ import annotations

import hashlib
import io
import mmap
import os
import resource
import struct
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path
from typing import Any, Callable

import torch

from .host_copies import host_empty

PART_BYTES = 64 << 20  # a part's tensor data when the process may write files of any size (parts are digested side
# by side, each on one core at about 1 GB/s: a 2.1 GB output in 33 parts keeps 16 cores busy, in 9 of 256 MiB, 9)


class UnreadableOutputs(Exception):
    """The files are not what the worker wrote: missing, changed after they were written, or not its format."""

    def __init__(self, message: str, *, changed: bool = False) -> None:
        super().__init__(message)
        self.changed = changed


def part_bytes() -> int:
    """How much tensor data one part holds: half this process's file-size limit (room for the format), at most
    :data:`PART_BYTES`."""
    soft, _ = resource.getrlimit(resource.RLIMIT_FSIZE)
    return PART_BYTES if soft == resource.RLIM_INFINITY else max(1, min(PART_BYTES, soft // 2))


def write_outputs(first: Path, outputs: list[Any], inputs: dict[str, Any],
                  piece_bytes: int | None = None) -> tuple[tuple[Path, ...], tuple[str, ...]]:
    """Write ``outputs`` (host tensors or plain values) and the changed ``inputs`` to ``first`` and, where they do
    not fit, ``first.1``, ``first.2``, ...; returns the paths and their digests, in order. The parts are written
    and digested side by side (both let go of the GIL)."""
    limit = piece_bytes or part_bytes()
    pieces: list[torch.Tensor] = []
    layout = {"outputs": [_lay_out(o, pieces, limit) for o in outputs],
              "inputs": {name: _lay_out(t, pieces, limit) for name, t in inputs.items()}}
    parts: list[list[torch.Tensor]] = [[]]
    filled = 0
    for piece in pieces:
        size = piece.numel() * piece.element_size()
        if parts[-1] and filled + size > limit:
            parts.append([])
            filled = 0
        parts[-1].append(piece)
        filled += size
    paths = [first if index == 0 else first.with_name(f"{first.name}.{index}") for index in range(len(parts))]
    extra = [{"layout": layout, "parts": len(parts)}] + [{}] * (len(parts) - 1)
    digests = _side_by_side(_write_part, list(zip(paths, parts, extra)))
    return tuple(paths), tuple(digests)


def read_outputs(paths: tuple[Path, ...], digests: tuple[str, ...], *, for_device: bool = False
                 ) -> tuple[list[Any], dict[str, Any]]:
    """The outputs and changed inputs written by :func:`write_outputs`, on the host (the files are removed once
    read; an output in several pieces is put together in page-locked memory when it is bound ``for_device``, see
    ``host_copies.host_empty``); raises :class:`UnreadableOutputs` for anything that is not exactly what was
    written."""
    if not paths or len(paths) != len(digests):
        raise UnreadableOutputs(f"{len(paths)} outputs files sent with {len(digests)} digests")
    contents = _side_by_side(_read_part, list(zip(paths, digests)))
    try:
        first = contents[0][0]
        layout = first["layout"]
        if first["parts"] != len(paths):
            raise ValueError(f"{first['parts']} parts written, {len(paths)} sent")
        supply = iter([piece for _, part in contents for piece in part])
        outputs = [_put_together(entry, supply, for_device) for entry in layout["outputs"]]
        inputs = {name: _put_together(entry, supply, for_device) for name, entry in layout["inputs"].items()}
    except Exception as exc:  # noqa: BLE001 - written by the harness; unreadable means tampered with
        raise UnreadableOutputs(f"its outputs file is not the harness's ({exc})") from None
    return outputs, inputs


# A part: MAGIC, the header's length (8 bytes, little-endian), the header (``torch.save`` of the pieces' dtypes and
# sizes, and in the first part the layout), then each piece's bytes as they lie in memory.
MAGIC = b"KFOUT001"
_LENGTH = struct.Struct("<Q")
_DTYPES = {str(d).removeprefix("torch."): d for d in vars(torch).values() if isinstance(d, torch.dtype)}


def _write_part(path: Path, part: list[torch.Tensor], extra: dict[str, Any]) -> str:
    views = [_bytes_of(piece) for piece in part]
    header = io.BytesIO()
    torch.save({"pieces": [(str(p.dtype).removeprefix("torch."), p.numel()) for p in part], **extra}, header)
    head = MAGIC + _LENGTH.pack(header.getbuffer().nbytes) + header.getvalue()
    digest = hashlib.sha256(head)
    with path.open("wb") as file:
        file.write(head)
        for view in views:
            file.write(view)
            digest.update(view)
    return digest.hexdigest()  # of the bytes written: the file is not read back


def _read_part(path: Path, digest: str) -> tuple[dict[str, Any], list[torch.Tensor]]:
    try:
        with path.open("rb", buffering=0) as file:
            data = _fresh_memory(os.fstat(file.fileno()).st_size)
            view, read = memoryview(data), 0
            while read < len(data) and (count := file.readinto(view[read:])):
                read += count
            del view
        path.unlink(missing_ok=True)
    except OSError as exc:
        raise UnreadableOutputs(f"its outputs file is gone ({exc.strerror})") from None
    if read != len(data) or hashlib.sha256(data).hexdigest() != digest:  # the same digest as write_outputs
        raise UnreadableOutputs("its outputs file was changed after it was written", changed=True)
    try:
        if data[:len(MAGIC)] != MAGIC:
            raise ValueError("not an outputs file")
        (length,) = _LENGTH.unpack_from(data, len(MAGIC))
        offset = len(MAGIC) + _LENGTH.size
        header = torch.load(io.BytesIO(bytes(data[offset:offset + length])), weights_only=True)
        offset += length
        pieces = []
        for dtype_name, numel in header["pieces"]:
            dtype = _DTYPES[dtype_name]
            size = numel * dtype.itemsize
            if offset + size > len(data):
                raise ValueError("a piece runs past the end of the file")
            raw = torch.frombuffer(data, dtype=torch.uint8, count=size, offset=offset) if size else \
                torch.empty(0, dtype=torch.uint8)
            pieces.append(raw.view(dtype))
            offset += size
        if offset != len(data):
            raise ValueError("bytes after the last piece")
    except Exception as exc:  # noqa: BLE001 - written by the harness; unreadable means tampered with
        raise UnreadableOutputs(f"its outputs file is not the harness's ({exc})") from None
    return header, pieces


def _fresh_memory(size: int) -> mmap.mmap | bytearray:
    """Writable memory of ``size`` bytes for a part to be read into: an anonymous mapping, whose pages the read
    is the first to write (a ``bytearray`` is zero-filled first, a second pass over the memory: a GiB part took
    0.66 s to read into one, 0.41 s into a mapping). It is unmapped when the last tensor viewing it goes."""
    if size == 0:
        return bytearray()
    return mmap.mmap(-1, size, flags=mmap.MAP_PRIVATE | mmap.MAP_ANONYMOUS)


def _bytes_of(piece: torch.Tensor) -> memoryview:
    """A contiguous host tensor's bytes, as they lie in memory (no copy)."""
    flat = piece.detach().resolve_conj().resolve_neg().contiguous().reshape(-1)
    return memoryview(flat.view(torch.uint8).numpy()) if flat.numel() else memoryview(b"")


def _side_by_side(work: Callable[..., Any], jobs: list[tuple[Any, ...]]) -> list[Any]:
    """``work(*job)`` for every job, in threads where there are several, results in order; the first exception
    raised is raised."""
    if len(jobs) == 1:
        return [work(*jobs[0])]
    with ThreadPoolExecutor(max_workers=min(len(jobs), os.cpu_count() or 1)) as pool:
        return list(pool.map(lambda job: work(*job), jobs))


def _lay_out(value: Any, pieces: list[torch.Tensor], limit: int) -> dict[str, Any]:
    if not isinstance(value, torch.Tensor):
        return {"value": value}
    flat = value.reshape(-1)
    step = max(1, limit // max(1, flat.element_size()))
    chunks = list(flat.split(step)) if flat.numel() else [flat]
    pieces.extend(chunks)
    return {"shape": list(value.shape), "pieces": len(chunks)}


def _put_together(entry: dict[str, Any], supply: Any, for_device: bool) -> Any:
    if "value" in entry:
        return entry["value"]
    chunks = [next(supply) for _ in range(entry["pieces"])]
    if len(chunks) == 1:
        flat = chunks[0]
    else:
        flat = torch.cat(chunks, out=host_empty(sum(c.numel() for c in chunks), chunks[0].dtype,
                                                for_device=for_device))
    del chunks
    return flat.reshape(entry["shape"])
