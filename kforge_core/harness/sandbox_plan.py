"""The plan a sandboxed worker runs under: what it sees of the file system and what it may take.

Made in KForge's process (``host/namespaces.sandbox_plan``, narrowed by ``host/limits`` and ``host/scratch_layout``),
carried to the worker in :class:`~kforge_core.harness.protocol.WorkerInit`, and read on both sides: the KForge
process starts the worker's command inside it (``host/namespaces.sandboxed_command``), the worker learns its tmpfs
sizes from it (``worker/limit_hits.know_limits``).
"""

from __future__ import annotations

import tempfile
from dataclasses import dataclass
from pathlib import Path

DEV_SHM = "/dev/shm"
SEALED_BYTES = 1 << 20  # mount points only
_TEMPORARY = {"/tmp", str(Path(tempfile.gettempdir()).resolve())}


@dataclass(frozen=True)
class SandboxPlan:
    """What a sandboxed worker sees: ``hide`` covered by an empty tmpfs, ``writable`` (its scratch directory and
    the build caches) writable, ``readable`` (Python and its packages, where they lie under a hidden directory)
    readable; the rest of the file system read-only. Paths are absolute and resolved."""

    hide: tuple[str, ...]
    writable: tuple[str, ...]
    readable: tuple[str, ...]
    # what the worker may take (tmpfs_sizes, limits_for_launcher): its tmpfs mounts' bytes in all (0: 4 GiB each),
    # its processes and threads at once (0: no limit)
    tmpfs_bytes: int = 0
    max_processes: int = 0
    # hidden directories of KForge's own (the scratch root, its state directory) that no worker writes into: a
    # tmpfs of SEALED_BYTES each, holding only the mount points of what is bound back, none of tmpfs_bytes' shares
    sealed: tuple[str, ...] = ()

    def hides(self, path: Path) -> bool:
        """Whether ``path`` is out of a sandboxed worker's sight (under a hidden directory, not bound back)."""
        path = Path(path).resolve()
        kept = (*self.writable, *self.readable)
        return any(path.is_relative_to(h) for h in self.hide) and not any(path.is_relative_to(k) for k in kept)

    def tmpfs_sizes(self) -> dict[str, int]:
        """The size of each tmpfs the launcher mounts (the hidden directories and /dev/shm), sharing
        ``tmpfs_bytes``: the temporary directory (compilers' files) four shares, /dev/shm two, the others one; a
        sealed directory gets :data:`SEALED_BYTES`, outside the shares."""
        if not self.tmpfs_bytes:
            return {}
        weights = {d: 4 if d in _TEMPORARY else 1 for d in self.hide if d not in self.sealed}
        weights[DEV_SHM] = 2
        total = sum(weights.values())
        return {**{d: self.tmpfs_bytes * w // total for d, w in weights.items()},
                **{d: SEALED_BYTES for d in self.hide if d in self.sealed}}

    def limits_for_launcher(self) -> dict[str, object]:
        """What the launcher limits (``namespace_launcher._tmpfs_options`` and ``_limit_processes``)."""
        return {"tmpfs": self.tmpfs_sizes(), "max_processes": self.max_processes}
