"""A shipped call's outputs on disk: written by the candidate's worker in files no larger than that process may
write (its ``RLIMIT_FSIZE``, ``harness.file_size_limit_mb``), each with its SHA-256; read back by the referee, which
hands nothing back before every digest matched, and removes each file as it opens it: a file is read once, and a
suite's shipped outputs do not pile up on disk (a problem with 2 GB outputs ships nine calls of them), nor wait in
the page cache to be written out.

An output of gigabytes (a KernelBench level-1 problem's 32768 x 32768 matmul is 4 GiB) is cut into flat pieces that
fill parts of at most half the limit; the first part also holds the layout that puts the pieces back together. A
part holds a small header (``torch.save``, read back with ``weights_only``) and then the pieces' bytes as they lie in
memory: nothing is serialized twice, and the referee reads each piece straight into its place in the output it
belongs to, where it is digested. The parts are written, read and digested in threads side by side.

The files lie in the candidate's scratch directory, which its worker (and so the candidate) writes: the referee
reads a shipped file only when it lies in that candidate's outputs folder (:class:`OutputsPlace`), reached with no
link followed, and only a regular file with one name (``safe_files``). Anything else is tampering, named.
"""

from __future__ import annotations

import hashlib
import io
import math
import os
import resource
import struct
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass
from pathlib import Path, PurePath
from typing import Any, Callable, Iterator

import torch

from ..safe_files import PlantedLink, take_beneath
from .host_copies import host_empty

PART_BYTES = 64 << 20  # a part's tensor data when the process may write files of any size (parts are digested side
# by side, each on one core at about 1 GB/s: a 2.1 GB output in 33 parts keeps 16 cores busy, in 9 of 256 MiB, 9)


class UnreadableOutputs(Exception):
    """The files are not what the worker wrote: missing, changed after they were written, or not its format.
    ``evidence``: what was found instead, naming the path (a link, a file outside the outputs folder)."""

    def __init__(self, message: str, *, changed: bool = False, evidence: str = "") -> None:
        super().__init__(message)
        self.changed = changed
        self.evidence = evidence

    @classmethod
    def changed_after_writing(cls) -> UnreadableOutputs:
        return cls("its outputs file was changed after it was written", changed=True)

    @classmethod
    def planted(cls, evidence: str) -> UnreadableOutputs:
        return cls(f"its outputs file is not the harness's: {evidence}", changed=True, evidence=evidence)


@dataclass(frozen=True)
class OutputsPlace:
    """Where a candidate's shipped outputs must lie: ``anchor / outputs``, ``anchor`` a directory no worker can
    replace (the workers' homes lie in it), ``outputs`` the candidate's outputs folder relative to it."""

    anchor: Path
    outputs: str

    def relative(self, path: Path) -> PurePath:
        """``path`` relative to the anchor, when it lies directly in the outputs folder; else UnreadableOutputs."""
        folder = self.anchor / self.outputs
        if Path(path).parent != folder or Path(path).name in ("", ".", ".."):
            raise UnreadableOutputs.planted(f"{path} is not in the candidate's outputs folder {folder}")
        return PurePath(self.outputs, Path(path).name)


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


def read_outputs(paths: tuple[Path, ...], digests: tuple[str, ...], *, for_device: bool = False,
                 place: OutputsPlace | None = None) -> tuple[list[Any], dict[str, Any]]:
    """The outputs and changed inputs written by :func:`write_outputs`, on the host; raises
    :class:`UnreadableOutputs` for anything that is not exactly what was written. With ``place``, every path must
    lie in it and is reached with no link followed.

    Each part's header is read first (``weights_only``: PyTorch's loader for files it does not trust), to know
    where its pieces go; then every piece is read straight into its place in the output it belongs to (page-locked
    memory for a large output bound ``for_device``, see ``host_copies.host_empty``) and digested there, the parts
    side by side. Nothing is handed back before every part's digest matched, and each file is removed once read.
    Reading a piece into memory of its own and then copying it into place cost several times the read and digest
    (the copy, then handing the pieces' memory back)."""
    if not paths or len(paths) != len(digests):
        raise UnreadableOutputs(f"{len(paths)} outputs files sent with {len(digests)} digests")
    parts = _side_by_side(_open_part, [(path, place) for path in paths], _readers())
    try:
        try:
            places, outputs, inputs = _places(parts, for_device)
        except Exception as exc:  # noqa: BLE001 - written by the harness; unreadable means tampered with
            for part, digest in zip(parts, digests):
                part.check_unchanged(digest)
            raise UnreadableOutputs(f"its outputs file is not the harness's ({exc})") from None
        _side_by_side(_fill_part, list(zip(parts, places, digests)), _readers())
    finally:
        for part in parts:
            part.close()
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


class _Part:
    """One part being read: its open file (past the header once that is read), its size, its header and the
    header's bytes (the digest starts with them). The file is removed once opened: what is read is what this
    process holds open."""

    def __init__(self, path: Path, place: OutputsPlace | None = None) -> None:
        if place is None:  # judged in the process that wrote it (a stage hook run outside a harness)
            self.file = path.open("rb", buffering=0)
            path.unlink(missing_ok=True)
        else:
            self.file = open(take_beneath(place.anchor, place.relative(path)), "rb", buffering=0)
        self.size = os.fstat(self.file.fileno()).st_size
        self.head = b""
        self.header: dict[str, Any] | None = None
        self.unreadable = ""  # why its header could not be read

    def read_header(self) -> None:
        prefix = self._read(len(MAGIC) + _LENGTH.size)
        if prefix[:len(MAGIC)] != MAGIC:
            raise ValueError("not an outputs file")
        (length,) = _LENGTH.unpack_from(prefix, len(MAGIC))
        if length > self.size - len(prefix):
            raise ValueError("its header runs past the end of the file")
        body = self._read(length)
        self.head = prefix + body
        self.header = torch.load(io.BytesIO(body), weights_only=True)

    def pieces(self) -> list[tuple[torch.dtype, int]]:
        if not isinstance(self.header, dict):
            raise ValueError(f"no header{f' ({self.unreadable})' if self.unreadable else ''}")
        return [(_DTYPES[name], int(numel)) for name, numel in self.header["pieces"]]

    def check_unchanged(self, digest: str) -> None:
        """Raise ``UnreadableOutputs(changed=True)`` when the whole file is not what was written (a part the
        harness could not make sense of was changed, not written so)."""
        self.file.seek(0)
        whole = hashlib.sha256()
        while chunk := self.file.read(1 << 24):
            whole.update(chunk)
        if whole.hexdigest() != digest:
            raise UnreadableOutputs.changed_after_writing()

    def close(self) -> None:
        if not self.file.closed:
            self.file.close()

    def _read(self, count: int) -> bytes:
        data = self.file.read(count)
        if len(data) != count:
            raise ValueError("shorter than its header says")
        return data


def _open_part(path: Path, place: OutputsPlace | None = None) -> _Part:
    try:
        part = _Part(path, place)
    except PlantedLink as exc:
        raise UnreadableOutputs.planted(str(exc)) from None
    except OSError as exc:
        raise UnreadableOutputs(f"its outputs file is gone ({exc.strerror})") from None
    try:
        part.read_header()
    except Exception as exc:  # noqa: BLE001 - judged with the others: unreadable, or changed after writing
        part.unreadable = str(exc)
    return part


def _places(parts: list[_Part], for_device: bool
            ) -> tuple[list[list[torch.Tensor]], list[Any], dict[str, Any]]:
    """Where each part's pieces go (flat byte views, part by part), and the outputs and inputs they fill. Raises
    ValueError (or whatever a malformed header raises) for a layout the parts do not add up to."""
    header = parts[0].header
    if not isinstance(header, dict):
        raise ValueError(parts[0].unreadable or "no header")
    if header["parts"] != len(parts):
        raise ValueError(f"{header['parts']} parts written, {len(parts)} sent")
    pieces = []
    for index, part in enumerate(parts):
        listed = part.pieces()
        length = len(part.head) + sum(numel * dtype.itemsize for dtype, numel in listed)
        if length != part.size:
            raise ValueError("a piece runs past the end of the file" if length > part.size
                             else "bytes after the last piece")
        pieces.extend((index, dtype, numel) for dtype, numel in listed)
    places: list[list[torch.Tensor]] = [[] for _ in parts]
    supply = iter(pieces)
    layout = header["layout"]
    outputs = [_destination(entry, supply, places, for_device) for entry in layout["outputs"]]
    inputs = {name: _destination(entry, supply, places, for_device) for name, entry in layout["inputs"].items()}
    if next(supply, None) is not None:
        raise ValueError("pieces no output takes")
    return places, outputs, inputs


def _destination(entry: dict[str, Any], supply: Iterator[tuple[int, torch.dtype, int]],
                 places: list[list[torch.Tensor]], for_device: bool) -> Any:
    """The value of one layout entry: a plain value as it is, a tensor as the memory its pieces are read into."""
    if "value" in entry:
        return entry["value"]
    shape = [int(size) for size in entry["shape"]]
    chunks = [next(supply) for _ in range(int(entry["pieces"]))]
    dtype = chunks[0][1]
    if any(chunk_dtype != dtype for _, chunk_dtype, _ in chunks):
        raise ValueError("pieces of one output differ in dtype")
    if any(size < 0 for size in shape):
        raise ValueError(f"a negative size in its shape {shape}")
    numel = math.prod(shape)
    if sum(count for _, _, count in chunks) != numel:
        raise ValueError("its pieces do not make up its shape")
    flat = host_empty(numel, dtype, for_device=for_device)
    offset = 0
    for index, _, count in chunks:
        if count:  # an empty piece has no bytes to read
            places[index].append(flat[offset:offset + count].view(torch.uint8))
        offset += count
    return flat.reshape(shape)


def _fill_part(part: _Part, places: list[torch.Tensor], digest: str) -> None:
    """Read the part's pieces into their places, digesting what was read; raises UnreadableOutputs when the
    bytes are not what was written."""
    hashed = hashlib.sha256(part.head)
    try:
        for place in places:
            view, read = memoryview(place.numpy()), 0
            while read < len(view) and (count := part.file.readinto(view[read:])):
                read += count
            if read != len(view):
                raise UnreadableOutputs.changed_after_writing()
            hashed.update(view)
        if part.file.read(1):
            raise UnreadableOutputs.changed_after_writing()
    except OSError as exc:
        raise UnreadableOutputs(f"its outputs file could not be read ({exc.strerror})") from None
    finally:
        part.close()  # here, side by side: the last close of a removed file hands its pages back (seconds for a
        # large output's shipments when their parts were closed one after another)
    if hashed.hexdigest() != digest:  # the same digest as write_outputs
        raise UnreadableOutputs.changed_after_writing()


def _bytes_of(piece: torch.Tensor) -> memoryview:
    """A contiguous host tensor's bytes, as they lie in memory (no copy)."""
    flat = piece.detach().resolve_conj().resolve_neg().contiguous().reshape(-1)
    return memoryview(flat.view(torch.uint8).numpy()) if flat.numel() else memoryview(b"")


def _side_by_side(work: Callable[..., Any], jobs: list[tuple[Any, ...]],
                  threads: ThreadPoolExecutor | None = None) -> list[Any]:
    """``work(*job)`` for every job, in threads where there are several (``threads``, or a pool made for the
    call), results in order; the first exception raised is raised."""
    if len(jobs) == 1:
        return [work(*jobs[0])]
    if threads is not None:
        return list(threads.map(lambda job: work(*job), jobs))
    with ThreadPoolExecutor(max_workers=min(len(jobs), os.cpu_count() or 1)) as pool:
        return list(pool.map(lambda job: work(*job), jobs))


_reader_threads: ThreadPoolExecutor | None = None


def _readers() -> ThreadPoolExecutor:
    """The threads that read shipped parts, kept for the life of the process (the referee, which runs no candidate
    code): starting a pool's threads anew cost a busy referee tens of milliseconds a shipment. A candidate's worker
    writes with a pool of its own each time, so that it leaves no thread behind."""
    global _reader_threads
    if _reader_threads is None:
        _reader_threads = ThreadPoolExecutor(max_workers=os.cpu_count() or 1, thread_name_prefix="kforge-read")
    return _reader_threads


def _lay_out(value: Any, pieces: list[torch.Tensor], limit: int) -> dict[str, Any]:
    if not isinstance(value, torch.Tensor):
        return {"value": value}
    flat = value.reshape(-1)
    step = max(1, limit // max(1, flat.element_size()))
    chunks = list(flat.split(step)) if flat.numel() else [flat]
    pieces.extend(chunks)
    return {"shape": list(value.shape), "pieces": len(chunks)}
