"""A cgroup for each worker, where this machine lets KForge make one (``harness.cgroups``): ``memory.max`` and
``pids.max`` then bound what the worker and everything it starts take together, tmpfs pages included, and the kernel
counts every time a limit was hit, which is how a verdict names it.

cgroup v2 gives a cgroup's children the memory and pids controllers only when the cgroup lists them in its
``cgroup.subtree_control``, and a cgroup that holds processes cannot (the root cgroup aside). So the workers' cgroups
are made in KForge's own cgroup when its children already have both (KForge in the root cgroup, as root), or when
KForge may write there and is the only process in it (``systemd-run --user --scope -p Delegate=yes kforge ...``, a
container it runs alone in): it then moves itself into a leaf, ``kforge``, and turns the controllers on. Where cgroup
v2 has neither controller (a host that binds them to cgroup v1), the v1 hierarchies of ``memory`` and ``pids`` are
used where KForge may write in its own cgroups there. Anywhere else no cgroup is made, and
:func:`cgroup_support` says why. Nothing here ever stops a worker from starting.
"""

from __future__ import annotations

import functools
import itertools
import logging
import os
import signal
import threading
import time
from dataclasses import dataclass
from pathlib import Path

log = logging.getLogger(__name__)

CONTROLLERS = ("memory", "pids")
PREFIX = "kforge-"  # a worker's cgroup: kforge-<KForge's pid>-<number>
LEAF = "kforge"  # where KForge moves itself in a delegated cgroup v2 that it alone was in
_lock = threading.Lock()


@dataclass(frozen=True)
class CgroupSupport:
    """Whether workers get cgroups here. ``version``: 2, 1 or 0 (none); ``bases``: (controller, the directory the
    workers' cgroups are made in; one directory for all with cgroup v2); ``why``: a sentence."""

    version: int
    why: str
    bases: tuple[tuple[str, str], ...] = ()

    @property
    def available(self) -> bool:
        return self.version > 0

    @property
    def controllers(self) -> tuple[str, ...]:
        return tuple(c for c, _ in self.bases)


@dataclass(frozen=True)
class LimitCounts:
    """The kernel's counts for a worker's cgroup: processes it killed at ``memory.max``, forks it refused at
    ``pids.max``."""

    oom_kills: int = 0
    pids_refused: int = 0


def cgroup_support(mode: str = "auto") -> CgroupSupport:
    """Where workers' cgroups are made under ``harness.cgroups = mode``, decided once per process."""
    if mode == "off":
        return CgroupSupport(0, 'harness.cgroups is "off"')
    with _lock:
        return _find_support()


@functools.cache
def _find_support() -> CgroupSupport:
    try:
        mounts, own = _cgroup_mounts(), _own_cgroups()
    except OSError as exc:
        return CgroupSupport(0, f"the cgroups of this process cannot be read ({exc})")
    support = _support_from(mounts, own)
    for _, base in support.bases:
        _sweep(Path(base))
    return support


def _support_from(mounts: dict[str, str], own: dict[str, str]) -> CgroupSupport:
    if "" in own and "cgroup2" in mounts:
        found = _version_2(Path(mounts["cgroup2"]) / own[""].lstrip("/"), own[""])
        if found.available or not _has_controllers_v1(mounts):
            return found
        v1 = _version_1(mounts, own)
        return CgroupSupport(v1.version, f"{v1.why} ({found.why})" if v1.available else f"{found.why}; {v1.why}",
                             v1.bases)
    if _has_controllers_v1(mounts):
        return _version_1(mounts, own)
    return CgroupSupport(0, "this machine has no cgroup file system in sight")


def _version_2(directory: Path, path: str) -> CgroupSupport:
    def listed(name: str) -> list[str]:
        found = set((directory / name).read_text().split())
        return [c for c in CONTROLLERS if c in found]

    try:
        controllers = listed("cgroup.controllers")
        if not controllers:
            return CgroupSupport(0, f"cgroup v2 gives KForge's cgroup ({path}) no memory and no pids controller")
        missing = "".join(f" (no {c} controller there)" for c in CONTROLLERS if c not in controllers)
        if listed("cgroup.subtree_control") == controllers and _writable(directory):
            return CgroupSupport(2, f"cgroup v2: workers' cgroups are made in KForge's cgroup {path}{missing}",
                                 tuple((c, str(directory)) for c in controllers))
        if not (_writable(directory) and os.access(directory / "cgroup.subtree_control", os.W_OK)):
            return CgroupSupport(0, f"KForge's cgroup v2 cgroup ({path}) is not delegated to this user, who may not "
                                    "make cgroups in it")
        others = [p for p in (directory / "cgroup.procs").read_text().split() if int(p) != os.getpid()]
        if others:
            return CgroupSupport(0, f"KForge's cgroup ({path}) holds {len(others)} other process(es), and cgroup v2 "
                                    "gives the children of a cgroup with processes no controllers: run KForge in a "
                                    "delegated cgroup of its own (systemd-run --user --scope -p Delegate=yes kforge ...)")
        leaf = directory / LEAF
        leaf.mkdir(exist_ok=True)
        (leaf / "cgroup.procs").write_text(str(os.getpid()))
        (directory / "cgroup.subtree_control").write_text(" ".join(f"+{c}" for c in controllers))
    except (OSError, ValueError) as exc:
        return CgroupSupport(0, f"cgroup v2: KForge's cgroup ({path}) cannot hold workers' cgroups ({exc})")
    return CgroupSupport(2, f"cgroup v2: KForge moved itself into {path}/{LEAF} and makes workers' cgroups beside it "
                            f"(it was alone in a delegated cgroup){missing}",
                         tuple((c, str(directory)) for c in controllers))


def _version_1(mounts: dict[str, str], own: dict[str, str]) -> CgroupSupport:
    bases, refused = [], []
    for controller in CONTROLLERS:
        if controller not in mounts or controller not in own:
            refused.append(f"no {controller} hierarchy")
            continue
        directory = Path(mounts[controller]) / own[controller].lstrip("/")
        if _writable(directory):
            bases.append((controller, str(directory)))
        else:
            refused.append(f"its {controller} cgroup ({own[controller]}) is not writable by this user")
    if not bases:
        return CgroupSupport(0, "cgroup v1: " + "; ".join(refused))
    made = " and ".join(c for c, _ in bases)
    note = f" ({'; '.join(refused)})" if refused else ""
    return CgroupSupport(1, f"cgroup v1: workers' {made} cgroups are made in KForge's own{note}", tuple(bases))


def _sweep(base: Path) -> None:
    """Remove the empty cgroups left by a KForge process that ended without removing its workers' (killed)."""
    try:
        entries = list(base.glob(f"{PREFIX}*-*"))
    except OSError:
        return
    for entry in entries:
        pid = entry.name[len(PREFIX):].split("-")[0]
        if pid.isdigit() and int(pid) != os.getpid() and not Path(f"/proc/{pid}").exists():
            try:
                entry.rmdir()  # only an empty cgroup goes: one that still holds processes stays
            except OSError:
                pass


def _writable(directory: Path) -> bool:
    return os.access(directory, os.W_OK | os.X_OK) and os.access(directory / "cgroup.procs", os.W_OK)


def _has_controllers_v1(mounts: dict[str, str]) -> bool:
    return any(c in mounts for c in CONTROLLERS)


def _cgroup_mounts() -> dict[str, str]:
    """``cgroup2`` and each cgroup v1 controller -> where its hierarchy is mounted (the first mount seen)."""
    found: dict[str, str] = {}
    with open("/proc/self/mountinfo") as f:
        for line in f:
            fields = line.split()
            dash = fields.index("-")
            fstype, options = fields[dash + 1], fields[dash + 3].split(",")
            point = fields[4].encode().decode("unicode_escape")
            if fstype == "cgroup2":
                found.setdefault("cgroup2", point)
            elif fstype == "cgroup":
                for option in options:
                    if option in CONTROLLERS:
                        found.setdefault(option, point)
    return found


def _own_cgroups() -> dict[str, str]:
    """This process's cgroup path per controller; ``""`` for cgroup v2."""
    own: dict[str, str] = {}
    with open("/proc/self/cgroup") as f:
        for line in f:
            _, controllers, path = line.rstrip("\n").split(":", 2)
            for controller in controllers.split(",") if controllers else [""]:
                own[controller] = path
    return own


class WorkerCgroup:
    """One worker's cgroup (one directory for v2, one per controller for v1): made before the worker starts, joined
    by the worker's process before it runs anything (:meth:`join`, its ``preexec_fn``), ended with it."""

    def __init__(self, version: int, directories: dict[str, Path], memory_bytes: int, max_pids: int) -> None:
        self.version = version
        self.directories = directories  # controller -> directory (the same one for each with cgroup v2)
        self.memory_bytes = memory_bytes
        self.max_pids = max_pids
        # what join writes, made here: the child between fork and exec runs as little Python as it can
        self._procs = [os.fsencode(d / "cgroup.procs") for d in dict.fromkeys(directories.values())]
        self._ended: LimitCounts | None = None  # the counts when it was removed

    @classmethod
    def make(cls, support: CgroupSupport, name: str, *, memory_bytes: int, max_pids: int) -> WorkerCgroup | None:
        """A new cgroup ``name`` with these limits, or None where none can be made (said once in the log)."""
        if not support.available:
            return None
        directories: dict[str, Path] = {}
        try:
            for controller, base in support.bases:
                directory = Path(base) / name
                if directory not in directories.values():  # cgroup v2: one for all controllers
                    directory.mkdir()
                directories[controller] = directory
            made = cls(support.version, directories, memory_bytes, max_pids)
            made._set_limits()
            return made
        except OSError as exc:
            for directory in directories.values():
                _remove(directory)
            _warn_once(f"a worker's cgroup could not be made, workers run without one ({exc})")
            return None

    def _set_limits(self) -> None:
        memory, pids = self.directories.get("memory"), self.directories.get("pids")
        if memory is not None:
            (memory / self.memory_file).write_text(str(self.memory_bytes))
            if self.version == 2:
                (memory / "memory.oom.group").write_text("1")  # the whole worker ends, not one of its children
        if pids is not None:
            (pids / "pids.max").write_text(str(self.max_pids))

    @property
    def procs_files(self) -> tuple[str, ...]:
        """The ``cgroup.procs`` files a process writes ``0`` into to join (what :meth:`join` does)."""
        return tuple(os.fsdecode(path) for path in self._procs)

    def join(self) -> None:
        """Move the calling process into the cgroup (``preexec_fn``: in the child, before it execs). A failure
        leaves the process where it was: a worker always starts."""
        for path in self._procs:
            try:
                fd = os.open(path, os.O_WRONLY)
                try:
                    os.write(fd, b"0")
                finally:
                    os.close(fd)
            except OSError:
                pass

    def counts(self) -> LimitCounts:
        """The kernel's counts so far (0 where a file cannot be read); once ended, those it ended with."""
        if self._ended is not None:
            return self._ended
        memory, pids = self.directories.get("memory"), self.directories.get("pids")
        events = "memory.events" if self.version == 2 else "memory.oom_control"
        return LimitCounts(_field(memory / events, "oom_kill") if memory else 0,
                           _field(pids / "pids.events", "max") if pids else 0)

    @property
    def memory_file(self) -> str:
        return "memory.max" if self.version == 2 else "memory.limit_in_bytes"

    def describe_memory(self) -> str:
        return f"its cgroup's {self.memory_file} ({self.memory_bytes / (1 << 20):.0f} MiB)"

    def describe_pids(self) -> str:
        return f"its cgroup's pids.max ({self.max_pids}, harness.max_processes)"

    def hits_since(self, before: LimitCounts) -> tuple[str, str]:
        """Sentences naming what was hit since ``before`` ("" for none): the process limit, the memory limit."""
        now = self.counts()
        pids = f"the kernel refused to start a process or thread at {self.describe_pids()}" \
            if now.pids_refused > before.pids_refused else ""
        memory = f"the kernel's out-of-memory killer ended a process at {self.describe_memory()}" \
            if now.oom_kills > before.oom_kills else ""
        return pids, memory

    def end(self) -> None:
        """Kill whatever is still in the cgroup (a process that left the worker's session), and remove it."""
        if self._ended is not None:
            return
        self._ended = self.counts()
        for directory in dict.fromkeys(self.directories.values()):
            _empty(directory)
            _remove(directory)


def _field(path: Path, key: str) -> int:
    try:
        for line in path.read_text().splitlines():
            name, _, value = line.partition(" ")
            if name == key:
                return int(value)
    except (OSError, ValueError):
        pass
    return 0


def _empty(directory: Path, timeout_s: float = 2.0) -> None:
    kill = directory / "cgroup.kill"
    deadline = time.monotonic() + timeout_s
    while time.monotonic() < deadline:
        try:
            pids = [int(p) for p in (directory / "cgroup.procs").read_text().split()]
        except (OSError, ValueError):
            return
        if not pids:
            return
        try:
            if kill.exists():
                kill.write_text("1")
            else:
                for pid in pids:
                    os.kill(pid, signal.SIGKILL)
        except OSError:
            pass
        time.sleep(0.02)


def _remove(directory: Path) -> None:
    for _ in range(50):  # the kernel lets a cgroup go once its last process is reaped
        try:
            directory.rmdir()
            return
        except FileNotFoundError:
            return
        except OSError:
            time.sleep(0.02)
    log.debug("cgroup %s could not be removed", directory)


_numbers = itertools.count(1)


def worker_cgroup(*, cgroups: str, memory_limit_mb: int, max_processes: int) -> WorkerCgroup | None:
    """A new cgroup for one worker or build under the harness's settings, or None where none can be made."""
    support = cgroup_support(cgroups)
    if not support.available:
        return None
    return WorkerCgroup.make(support, f"{PREFIX}{os.getpid()}-{next(_numbers)}",
                             memory_bytes=worker_memory_bytes(memory_limit_mb), max_pids=max_processes)


def worker_memory_bytes(memory_limit_mb: int) -> int:
    """A worker cgroup's memory limit: ``harness.memory_limit_mb`` when set, else three quarters of the machine's
    memory (one runaway worker cannot take the last quarter from KForge and the rest)."""
    if memory_limit_mb > 0:
        return memory_limit_mb << 20
    try:
        total = os.sysconf("SC_PAGE_SIZE") * os.sysconf("SC_PHYS_PAGES")
    except (ValueError, OSError):
        return 1 << 62
    return total // 4 * 3


@functools.cache
def _warn_once(message: str) -> None:
    log.warning(message)
