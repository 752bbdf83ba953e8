"""Facts about the host CPU read from the operating system: model, cores, SIMD width, caches.

Reading them is quick and never raises: a fact this OS does not expose is reported as unknown.
"""

from __future__ import annotations

import os
import platform
from dataclasses import dataclass
from pathlib import Path

CPUINFO = Path("/proc/cpuinfo")
SYSFS_CACHE = Path("/sys/devices/system/cpu/cpu0/cache")
TRANSPARENT_HUGEPAGES = Path("/sys/kernel/mm/transparent_hugepage/enabled")


@dataclass(frozen=True)
class Simd:
    """The widest vector unit the CPU flags announce."""

    name: str  # "AVX-512", "AVX2", "SSE2", "NEON"
    width_bits: int
    fma: bool

    def lanes(self, itemsize: int) -> int:
        return self.width_bits // (8 * itemsize)

    def describe(self) -> str:
        fma = " + FMA" if self.fma else ""
        return (f"{self.name}{fma}: {self.width_bits}-bit vectors, {self.lanes(4)} x float32 or "
                f"{self.lanes(8)} x float64 per instruction")


@dataclass(frozen=True)
class CacheLevel:
    level: int
    kind: str  # "Data", "Instruction", "Unified"
    size_bytes: int
    line_bytes: int
    shared_by: int  # CPUs sharing one instance

    def describe(self) -> str:
        who = "per core" if self.shared_by <= 1 else f"shared by {self.shared_by} CPUs"
        name = f"L{self.level}{'d' if self.kind == 'Data' else ''}"
        return f"{name} {_size(self.size_bytes)} {who}"


@dataclass(frozen=True)
class MachineFacts:
    model: str
    arch: str
    cpus: int  # CPUs this process may run on
    simd: Simd
    caches: tuple[CacheLevel, ...]
    huge_pages: str  # transparent huge pages: "always", "madvise", "never" or "unknown"

    @property
    def last_level_cache_bytes(self) -> int:
        data = [c for c in self.caches if c.kind != "Instruction"]
        return max((c.size_bytes for c in data), default=0)

    def describe(self) -> str:
        caches = ", ".join(c.describe() for c in self.caches if c.kind != "Instruction") or "unknown"
        line = next((c.line_bytes for c in self.caches if c.line_bytes), 0)
        line_text = f"; {line}-byte lines" if line else ""
        return "\n".join([
            f"CPU: {self.model} ({self.arch}), {self.cpus} CPUs available to this process",
            f"SIMD: {self.simd.describe()}",
            f"Caches: {caches}{line_text}",
            f"Transparent huge pages: {self.huge_pages}",
        ])


def _size(n: int) -> str:
    for unit, scale in (("MiB", 1 << 20), ("KiB", 1 << 10)):
        if n >= scale and n % scale == 0:
            return f"{n // scale} {unit}"
    return f"{n} B"


def _cpuinfo() -> dict[str, str]:
    """The first processor's fields from /proc/cpuinfo (empty where there is none)."""
    try:
        text = CPUINFO.read_text()
    except OSError:
        return {}
    fields: dict[str, str] = {}
    for line in text.splitlines():
        if not line.strip():
            if fields:
                break
            continue
        key, _, value = line.partition(":")
        fields.setdefault(key.strip(), value.strip())
    return fields


def simd_from_flags(flags: set[str], arch: str) -> Simd:
    """The widest vector extension among CPU ``flags`` (x86 names, or ``asimd``/``sve`` on Arm)."""
    fma = "fma" in flags
    if "avx512f" in flags:
        return Simd("AVX-512", 512, fma)
    if "avx2" in flags:
        return Simd("AVX2", 256, fma)
    if "avx" in flags:
        return Simd("AVX", 256, fma)
    if "sse2" in flags or arch in ("x86_64", "AMD64"):
        return Simd("SSE2", 128, fma)
    if "asimd" in flags or arch in ("aarch64", "arm64"):
        return Simd("NEON", 128, True)
    return Simd("none known", 64, False)


def _cache_levels() -> tuple[CacheLevel, ...]:
    levels = []
    for index in sorted(SYSFS_CACHE.glob("index*")):
        try:
            levels.append(CacheLevel(
                level=int((index / "level").read_text()),
                kind=(index / "type").read_text().strip(),
                size_bytes=_parse_size((index / "size").read_text()),
                line_bytes=int((index / "coherency_line_size").read_text()),
                shared_by=_count_cpus((index / "shared_cpu_list").read_text()),
            ))
        except (OSError, ValueError):
            continue
    return tuple(levels)


def _parse_size(text: str) -> int:
    text = text.strip().upper()
    scale = {"K": 1 << 10, "M": 1 << 20, "G": 1 << 30}.get(text[-1:], 1)
    return int(text.rstrip("KMG")) * scale


def _count_cpus(cpu_list: str) -> int:
    count = 0
    for part in cpu_list.strip().split(","):
        low, _, high = part.partition("-")
        count += int(high or low) - int(low) + 1
    return count


def _usable_cpus() -> int:
    try:
        return len(os.sched_getaffinity(0))
    except AttributeError:  # macOS, Windows
        return os.cpu_count() or 1


def _huge_pages() -> str:
    """The bracketed choice in ``[always] madvise never``."""
    try:
        text = TRANSPARENT_HUGEPAGES.read_text()
    except OSError:
        return "unknown"
    start, end = text.find("["), text.find("]")
    return text[start + 1:end] if 0 <= start < end else "unknown"


def read_machine_facts() -> MachineFacts:
    info = _cpuinfo()
    arch = platform.machine()
    flags = set((info.get("flags") or info.get("Features") or "").split())
    model = info.get("model name") or platform.processor() or arch
    return MachineFacts(model, arch, _usable_cpus(), simd_from_flags(flags, arch), _cache_levels(), _huge_pages())
