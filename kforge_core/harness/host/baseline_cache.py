"""Baselines kept across runs: the eager and ``torch.compile`` timings of a problem, measured once per device.

A suite of problems (``kforge bench``) or a second run on the same problem reads them back instead of measuring
again. The key is what the timings depend on: the problem's source, the device (its type and name, and the host
for the host CPU, whose name says little), the torch version, and the harness settings that shape the timed runs.
Files live under ``<cache_dir>/baselines/``; each holds a problem's baselines for one key, with their timing
method and when they were measured. Only successful measurements are kept: a failing baseline is tried again.
"""

from __future__ import annotations

import datetime as dt
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

_TIMING_FIELDS = ("seed", "warmup", "repetitions", "input_pool_mb", "l2_flush_bytes")


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

    def note(self, name: str, key: BaselineKey) -> str:
        when = dt.datetime.fromtimestamp(self.measured_at).strftime("%Y-%m-%d %H:%M")
        return (f"{name}: read from the baseline cache (measured {when} on {key.device_name}, "
                f"torch {key.torch_version})")


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
            return {name: CachedBaseline(tuple(float(s) for s in entry["samples_ms"]),
                                         TimingMethod.from_json(entry["method"]), float(entry["measured_at"]))
                    for name, entry in data["baselines"].items()}
        except (OSError, ValueError, KeyError, TypeError):
            return {}

    def write(self, key: BaselineKey, measured: dict[str, tuple[tuple[float, ...], TimingMethod]]) -> None:
        """Add ``measured`` (name -> samples and method) to what is kept for ``key``."""
        if not measured:
            return
        kept = {name: {"samples_ms": list(b.samples_ms), "method": b.method.to_json(), "measured_at": b.measured_at}
                for name, b in self.read(key).items()}
        now = time.time()
        for name, (samples, method) in measured.items():
            kept[name] = {"samples_ms": list(samples), "method": method.to_json(), "measured_at": now}
        self.root.mkdir(parents=True, exist_ok=True)
        text = json.dumps({"key": _jsonable(key), "baselines": kept}, indent=1)
        handle, temporary = tempfile.mkstemp(dir=self.root, prefix=".baselines-", suffix=".json")
        with os.fdopen(handle, "w") as out:
            out.write(text)
        os.replace(temporary, self.root / key.file_name)  # readers see the old file or the new one, never half


def _jsonable(key: BaselineKey) -> dict[str, Any]:
    return json.loads(json.dumps(asdict(key)))
