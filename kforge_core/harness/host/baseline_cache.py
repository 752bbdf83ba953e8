"""Baselines kept across runs: the eager and ``torch.compile`` timings of a problem, per device and timing method.

A suite of problems (``kforge bench``) or a second run on the same problem reads them back as a prior, which a
fresh short measurement beside the candidate must confirm (``interleave.py``). The key is what the timings depend
on: the problem's source, the device (its type and name, and the host for the host CPU, whose name says little),
the torch version, and the harness settings that shape the timed runs, the headline timer among them; each entry
keeps the figures of every timer measured.
Files live under ``<cache_dir>/baselines/``; each holds a problem's baselines for one key, with their timing
method and when they were measured. Only successful measurements are kept: a failing baseline is tried again.
"""

from __future__ import annotations

import hashlib
import json
import os
import platform
import tempfile
import time
from dataclasses import asdict, dataclass
from pathlib import Path
from typing import Any

from ...settings import HarnessSettings
from ..protocol import DeviceFacts
from ..verdict import TimingMethod

_TIMING_FIELDS = ("seed", "warmup", "repetitions", "input_pool_mb", "l2_flush_bytes", "timer")


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


class BaselineCache:
    """The cache directory's ``baselines/`` folder."""

    def __init__(self, cache_dir: Path) -> None:
        self.root = Path(cache_dir) / "baselines"

    def read(self, key: BaselineKey) -> dict[str, CachedBaseline]:
        """The baselines kept for ``key`` (none when the file is missing or unreadable)."""
        try:
            data = json.loads((self.root / key.file_name).read_text())
            if data.get("key") != _jsonable(key):
                return {}  # a hash collision, or a file edited by hand
            return {name: _entry(entry) for name, entry in data["baselines"].items()}
        except (OSError, ValueError, KeyError, TypeError):
            return {}

    def write(self, key: BaselineKey, measured: dict[str, tuple[tuple[tuple[str, tuple[float, ...]], ...],
                                                                TimingMethod]], at: float | None = None) -> None:
        """Add ``measured`` (name -> every timer's samples, and the method) to what is kept for ``key``."""
        if not measured:
            return
        kept = {name: _json_entry(b.figures, b.method, b.measured_at) for name, b in self.read(key).items()}
        now = time.time() if at is None else at
        for name, (figures, method) in measured.items():
            kept[name] = _json_entry(figures, method, now)
        self.root.mkdir(parents=True, exist_ok=True)
        text = json.dumps({"key": _jsonable(key), "baselines": kept}, indent=1)
        handle, temporary = tempfile.mkstemp(dir=self.root, prefix=".baselines-", suffix=".json")
        with os.fdopen(handle, "w") as out:
            out.write(text)
        os.replace(temporary, self.root / key.file_name)  # readers see the old file or the new one, never half


def _json_entry(figures: tuple[tuple[str, tuple[float, ...]], ...], method: TimingMethod,
                at: float) -> dict[str, Any]:
    return {"samples_ms": list(dict(figures)[method.headline]), "figures": {t: list(s) for t, s in figures},
            "method": method.to_json(), "measured_at": at}


def _entry(entry: dict[str, Any]) -> CachedBaseline:
    method = TimingMethod.from_json(entry["method"])
    samples = tuple(float(s) for s in entry["samples_ms"])
    figures = tuple((t, tuple(float(x) for x in s)) for t, s in entry.get("figures", {}).items())
    return CachedBaseline(samples, method, float(entry["measured_at"]), figures or ((method.headline, samples),))


def _jsonable(key: BaselineKey) -> dict[str, Any]:
    return json.loads(json.dumps(asdict(key)))
