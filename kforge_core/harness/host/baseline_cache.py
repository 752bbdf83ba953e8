"""Baselines kept across runs: the eager and ``torch.compile`` timings of a problem, per device and timing method.

A suite of problems (``kforge bench``) or a second run on the same problem reads them back as a prior, which a
fresh short measurement beside the candidate must confirm (``baselines_window.py``). The key is what the timings depend
on: the problem's source, the device (its type and name, and the host for the host CPU, whose name says little),
the torch version, and the harness settings that shape the timed runs, the headline timer among them; each entry
keeps the figures of every timer measured. Only successful measurements are kept: a failing baseline is tried
again.

No figure is taken on a candidate's word. The files live in KForge's own state directory
(``<state_dir>/baselines/``, ``Settings.state_dir``), which no sandboxed worker sees, never in the cache directory
workers write; and each entry carries an HMAC-SHA256 of its canonical bytes under a key kept beside the entries
(``key``, 32 random bytes, mode 0600), which workers never get. An entry that cannot be read, is not JSON, lacks a
field, has a wrong type, or whose MAC does not match is not used: its baselines are measured afresh, and
:meth:`BaselineCache.read` says why in one line (a notice for the verdict's baseline notes). Without the sandbox a
worker runs as the same user and could read the key: docs/trust.md says what the MAC still buys then.
"""

from __future__ import annotations

import hashlib
import hmac
import json
import logging
import os
import platform
import secrets
import stat
import tempfile
import time
from dataclasses import asdict, dataclass, field
from pathlib import Path
from typing import Any

from ...settings import HarnessSettings
from ..protocol import DeviceFacts
from ..verdict import TimingMethod

log = logging.getLogger(__name__)

_TIMING_FIELDS = ("seed", "warmup", "repetitions", "input_pool_mb", "l2_flush_bytes", "timer")
KEY_FILE = "key"
_KEY_BYTES = 32
_ENTRY_BYTES = 16 << 20  # no entry is near this (a few KB); a larger file is not read whole
FORMAT = 2  # entries without a MAC (format 1, under <cache_dir>/baselines/) are not read


@dataclass(frozen=True)
class BaselineKey:
    problem_digest: str
    device_type: str
    device_name: str
    host: str  # the host's name for the host CPU; empty for a device that names itself
    torch_version: str
    timing: tuple[tuple[str, Any], ...]

    @classmethod
    def of(cls, problem_digest: str, facts: DeviceFacts, settings: HarnessSettings, *,
           host_cpu: bool) -> BaselineKey:
        """The key for ``problem_digest`` on the device ``facts`` describe (``host_cpu``: ``Device.host_cpu``)."""
        return cls(problem_digest, facts.device.split(":")[0], facts.name, platform.node() if host_cpu else "",
                   facts.torch_version, tuple((name, getattr(settings, name)) for name in _TIMING_FIELDS))

    @property
    def file_name(self) -> str:
        digest = hashlib.sha256(repr(self).encode()).hexdigest()[:16]
        return f"{self.problem_digest}-{digest}.json"


@dataclass(frozen=True)
class CachedBaseline:
    """One baseline read from the cache."""

    samples_ms: tuple[float, ...]
    method: TimingMethod
    measured_at: float
    figures: tuple[tuple[str, tuple[float, ...]], ...] = ()  # every timer's samples


@dataclass(frozen=True)
class CacheRead:
    """What the cache holds for a key: the baselines, and, when an entry was there but not used, why (one line)."""

    baselines: dict[str, CachedBaseline] = field(default_factory=dict)
    notice: str = ""


class BadEntry(Exception):
    """An entry that is not used (the message says why)."""


class BaselineCache:
    """The directory ``root`` (``<state_dir>/baselines``) and its key."""

    def __init__(self, root: Path) -> None:
        self.root = Path(root)

    def read(self, key: BaselineKey) -> CacheRead:
        """The baselines kept for ``key``: none when there is no entry, and none, with a notice (also logged),
        when the entry is unreadable, malformed or not authenticated (it is then measured afresh and written
        anew)."""
        found = self._load(key)
        if found.notice:
            log.warning("%s", found.notice)
        return found

    def _load(self, key: BaselineKey) -> CacheRead:
        path = self.root / key.file_name
        try:
            data = _read_file(path)
        except FileNotFoundError:
            return CacheRead()
        except (OSError, BadEntry) as exc:
            return _refused(path, f"it could not be read ({_why(exc)})")
        try:
            payload = _authenticated(data, self._key(create=False))
            if payload.get("key") != _jsonable(key):
                return CacheRead()  # a hash collision: another key's entry, not a bad one
            return CacheRead({str(name): _entry(entry) for name, entry in _mapping(payload["baselines"]).items()})
        except BadEntry as exc:
            return _refused(path, str(exc))
        except Exception as exc:  # noqa: BLE001 - whatever malformed data raises while it is parsed
            return _refused(path, f"it is malformed ({type(exc).__name__}: {exc})")

    def write(self, key: BaselineKey, measured: dict[str, tuple[tuple[tuple[str, tuple[float, ...]], ...],
                                                                TimingMethod]], at: float | None = None) -> None:
        """Add ``measured`` (name -> every timer's samples, and the method) to what is kept for ``key``; an entry
        that was not used is replaced."""
        if not measured:
            return
        kept = {name: _json_entry(b.figures, b.method, b.measured_at) for name, b in self._load(key).baselines.items()}
        now = time.time() if at is None else at
        for name, (figures, method) in measured.items():
            kept[name] = _json_entry(figures, method, now)
        payload = {"key": _jsonable(key), "baselines": kept}
        document = {"format": FORMAT, "mac": _mac(self._key(create=True), payload), "payload": payload}
        _write_atomically(self.root, key.file_name, json.dumps(document, indent=1).encode())

    def _key(self, *, create: bool) -> bytes:
        """The MAC key: ``root/key``, 32 bytes, a regular file of this user's that no one else may read; made
        when missing (and ``create``), made anew when it is not such a file (every entry made under the old one is
        then measured afresh)."""
        path = self.root / KEY_FILE
        try:
            return _read_key(path)
        except FileNotFoundError:
            if not create:
                raise BadEntry("no key authenticates it (the key file is missing)") from None
        except (OSError, BadEntry) as exc:
            if not create:
                raise BadEntry(f"its key {path} is not usable ({_why(exc)})") from None
            log.warning("the baseline cache's key %s is not usable (%s): a new key is made, and every baseline "
                        "kept under the old one will be measured afresh", path, _why(exc))
        key = secrets.token_bytes(_KEY_BYTES)
        _write_atomically(self.root, KEY_FILE, key, mode=0o600)
        return key



def _refused(path: Path, why: str) -> CacheRead:
    notice = f"the baseline cache's entry {path} was not used: {why}; measured afresh"
    return CacheRead(notice=" ".join(notice.split()))  # one line, whatever the error's text held


def _read_file(path: Path) -> bytes:
    """The bytes of ``path``, a regular file (a link is not followed)."""
    fd = os.open(path, os.O_RDONLY | getattr(os, "O_NOFOLLOW", 0) | getattr(os, "O_NONBLOCK", 0))
    with os.fdopen(fd, "rb") as handle:
        if not stat.S_ISREG(os.fstat(fd).st_mode):
            raise BadEntry("it is not a regular file")
        data = handle.read(_ENTRY_BYTES + 1)
    if len(data) > _ENTRY_BYTES:
        raise BadEntry(f"it is larger than {_ENTRY_BYTES >> 20} MiB")
    return data


def _read_key(path: Path) -> bytes:
    info = os.lstat(path)
    if not stat.S_ISREG(info.st_mode) or info.st_uid != os.getuid() or info.st_mode & 0o077:
        raise BadEntry("not a regular file of this user's, readable by it alone")
    key = _read_file(path)
    if len(key) != _KEY_BYTES:
        raise BadEntry(f"{len(key)} bytes, not {_KEY_BYTES}")
    return key


def _authenticated(data: bytes, key: bytes) -> dict[str, Any]:
    """The entry's payload, once its MAC matched; BadEntry otherwise."""
    try:
        document = json.loads(data)
    except ValueError as exc:
        raise BadEntry(f"it is not JSON ({exc})") from None
    document = _mapping(document)
    if document.get("format") != FORMAT or not isinstance(document.get("mac"), str) or "payload" not in document:
        raise BadEntry("it is not an authenticated entry (no format, MAC or payload)")
    if not hmac.compare_digest(document["mac"], _mac(key, document["payload"])):
        raise BadEntry("its MAC does not match (it was not written by this cache)")
    return _mapping(document["payload"])


def _mac(key: bytes, payload: Any) -> str:
    """HMAC-SHA256 of the payload's canonical bytes (sorted keys, no spaces, ASCII)."""
    canonical = json.dumps(payload, sort_keys=True, separators=(",", ":"), ensure_ascii=True, allow_nan=False)
    return hmac.new(key, canonical.encode(), hashlib.sha256).hexdigest()


def _mapping(value: Any) -> dict[str, Any]:
    if not isinstance(value, dict):
        raise BadEntry(f"a {type(value).__name__} where an object was expected")
    return value


def _write_atomically(root: Path, name: str, data: bytes, mode: int = 0o600) -> None:
    """``root/name`` replaced by a new file holding ``data``: readers see the old file or the new one, never half;
    the rename replaces the name (a link there included), never writing through it."""
    root.mkdir(parents=True, exist_ok=True, mode=0o700)
    handle, temporary = tempfile.mkstemp(dir=root, prefix=".baselines-")
    try:
        os.fchmod(handle, mode)
        with os.fdopen(handle, "wb") as out:
            out.write(data)
        os.replace(temporary, root / name)
    except BaseException:
        Path(temporary).unlink(missing_ok=True)
        raise


def _why(exc: BaseException) -> str:
    return exc.strerror or str(exc) if isinstance(exc, OSError) else str(exc)


def _json_entry(figures: tuple[tuple[str, tuple[float, ...]], ...], method: TimingMethod,
                at: float) -> dict[str, Any]:
    return {"samples_ms": list(dict(figures)[method.headline]), "figures": {t: list(s) for t, s in figures},
            "method": method.to_json(), "measured_at": at}


def _entry(entry: dict[str, Any]) -> CachedBaseline:
    entry = _mapping(entry)
    method = TimingMethod.from_json(entry["method"])
    samples = tuple(float(s) for s in entry["samples_ms"])
    figures = tuple((str(t), tuple(float(x) for x in s)) for t, s in _mapping(entry.get("figures", {})).items())
    if not samples:
        raise BadEntry("a baseline without samples")
    return CachedBaseline(samples, method, float(entry["measured_at"]), figures or ((method.headline, samples),))


def _jsonable(key: BaselineKey) -> dict[str, Any]:
    return json.loads(json.dumps(asdict(key)))
