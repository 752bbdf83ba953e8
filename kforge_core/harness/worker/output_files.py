"""A shipped call's outputs on disk: written by the candidate's worker in files no larger than that process may
write (its ``RLIMIT_FSIZE``, ``harness.file_size_limit_mb``), each with its SHA-256; read back by the referee, which
checks every digest before it believes a byte.

An output of gigabytes (a KernelBench level-1 problem's 32768 x 32768 matmul is 4 GiB) is cut into flat pieces that
fill parts of at most half the limit; the first part also holds the layout that puts the pieces back together.
"""

from __future__ import annotations

import contextlib
import hashlib
import io
import resource
from pathlib import Path
from typing import Any, Iterator

import torch

PART_BYTES = 256 << 20  # a part's tensor data when the process may write files of any size


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
    not fit, ``first.1``, ``first.2``, ...; returns the paths and their digests, in order."""
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
    paths, digests = [], []
    for index, part in enumerate(parts):
        path = first if index == 0 else first.with_name(f"{first.name}.{index}")
        content: dict[str, Any] = {"pieces": [_own_storage(p) for p in part]}
        if index == 0:
            content.update(layout=layout, parts=len(parts))
        serialized = io.BytesIO()
        with _without_crc32():  # the SHA-256 guards every byte; the zip format's own CRC-32 would double the cost
            torch.save(content, serialized)
        del content
        data = serialized.getbuffer()
        path.write_bytes(data)
        paths.append(path)
        digests.append(hashlib.sha256(data).hexdigest())  # of the bytes written: the file is not read back
        del data, serialized
    return tuple(paths), tuple(digests)


def read_outputs(paths: tuple[Path, ...], digests: tuple[str, ...]) -> tuple[list[Any], dict[str, Any]]:
    """The outputs and changed inputs written by :func:`write_outputs`, on the host; raises
    :class:`UnreadableOutputs` for anything that is not exactly what was written."""
    if not paths or len(paths) != len(digests):
        raise UnreadableOutputs(f"{len(paths)} outputs files sent with {len(digests)} digests")
    pieces: list[torch.Tensor] = []
    layout: dict[str, Any] = {}
    for index, (path, digest) in enumerate(zip(paths, digests)):
        try:
            data = path.read_bytes()
        except OSError as exc:
            raise UnreadableOutputs(f"its outputs file is gone ({exc.strerror})") from None
        if hashlib.sha256(data).hexdigest() != digest:  # the same digest as write_outputs
            raise UnreadableOutputs("its outputs file was changed after it was written", changed=True)
        try:
            content = torch.load(io.BytesIO(data), weights_only=True, map_location="cpu")
            del data
            if index == 0:
                layout = content["layout"]
                if content["parts"] != len(paths):
                    raise ValueError(f"{content['parts']} parts written, {len(paths)} sent")
            pieces.extend(content["pieces"])
        except Exception as exc:  # noqa: BLE001 - written by the harness; unreadable means tampered with
            raise UnreadableOutputs(f"its outputs file is not the harness's ({exc})") from None
    try:
        supply = iter(pieces)
        outputs = [_put_together(entry, supply) for entry in layout["outputs"]]
        inputs = {name: _put_together(entry, supply) for name, entry in layout["inputs"].items()}
    except Exception as exc:  # noqa: BLE001 - as above
        raise UnreadableOutputs(f"its outputs file is not the harness's ({exc})") from None
    return outputs, inputs


@contextlib.contextmanager
def _without_crc32() -> Iterator[None]:
    """``torch.save`` without the CRC-32 of each record, where this PyTorch lets it be turned off."""
    serialization = torch.serialization
    if not hasattr(serialization, "set_crc32_options"):
        yield
        return
    was = serialization.get_crc32_options()
    serialization.set_crc32_options(False)
    try:
        yield
    finally:
        serialization.set_crc32_options(was)


def _own_storage(piece: torch.Tensor) -> torch.Tensor:
    """``piece`` with a storage of its own: a view into a larger tensor would save that tensor's whole storage; a
    tensor that is all of its storage (a small output, in one piece) is saved as it is, not copied again."""
    whole = piece.untyped_storage().nbytes() == piece.numel() * piece.element_size()
    return piece if whole and piece.storage_offset() == 0 else piece.clone()


def _lay_out(value: Any, pieces: list[torch.Tensor], limit: int) -> dict[str, Any]:
    if not isinstance(value, torch.Tensor):
        return {"value": value}
    flat = value.reshape(-1)
    step = max(1, limit // max(1, flat.element_size()))
    chunks = list(flat.split(step)) if flat.numel() else [flat]
    pieces.extend(chunks)
    return {"shape": list(value.shape), "pieces": len(chunks)}


def _put_together(entry: dict[str, Any], supply: Any) -> Any:
    if "value" in entry:
        return entry["value"]
    chunks = [next(supply) for _ in range(entry["pieces"])]
    flat = chunks[0] if len(chunks) == 1 else torch.cat(chunks)
    del chunks
    return flat.reshape(entry["shape"])
