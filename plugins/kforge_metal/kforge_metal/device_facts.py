"""Facts about the Apple GPU, from what PyTorch and the OS report, read at run time.

* the chip: ``sysctl -n machdep.cpu.brand_string`` ("Apple M3 Max"); the GPU shares the chip's name;
* the GPU core count and Metal family: ``system_profiler SPDisplaysDataType -json`` (``sppci_cores``,
  ``spdisplays_mtlgpufamilysupport``);
* unified memory: ``sysctl -n hw.memsize``; the working set Metal recommends for one process:
  ``torch.mps.recommended_max_memory()``.

Each reading is parsed by a small function of the tool's text, so that the parsing is tested anywhere; a tool that
is missing or fails leaves its fact unknown and the facts say so.
"""

from __future__ import annotations

import json
import platform
import re
import subprocess
from dataclasses import dataclass
from typing import Callable

Run = Callable[[list[str]], "str | None"]  # a command -> its stdout, or None when it could not run


@dataclass(frozen=True)
class MetalFacts:
    """One Apple GPU, as the lowering and the profile summary describe it."""

    chip: str = ""
    gpu_cores: int | None = None
    metal_family: str = ""
    unified_memory_bytes: int | None = None
    working_set_bytes: int | None = None
    macos: str = ""
    unknown: tuple[str, ...] = ()  # facts that could not be read, and why

    def headline(self) -> str:
        cores = f", {self.gpu_cores}-core GPU" if self.gpu_cores else ""
        return f"{self.chip or 'an Apple GPU'}{cores}"

    def describe(self) -> str:
        lines = [f"Target: {self.headline()}" + (f" ({self.metal_family})" if self.metal_family else "")
                 + (f", macOS {self.macos}" if self.macos else "")]
        if self.unified_memory_bytes:
            lines.append(f"Unified memory: {self.unified_memory_bytes / 2**30:.0f} GiB shared by the CPU and the GPU "
                         "(no copies between host and device: an MPS tensor lives in the same memory).")
        if self.working_set_bytes:
            lines.append(f"Recommended GPU working set for this process: {self.working_set_bytes / 2**30:.1f} GiB "
                         "(torch.mps.recommended_max_memory()).")
        lines.append("SIMD-group width 32 threads; at most 1024 threads per threadgroup; 32 KiB of threadgroup "
                     "memory per threadgroup.")
        lines += [f"Not known: {item}" for item in self.unknown]
        return "\n".join(lines)


def parse_brand_string(text: str | None) -> str:
    """The chip from ``sysctl -n machdep.cpu.brand_string``: "Apple M2 Pro\\n" -> "Apple M2 Pro"."""
    return (text or "").strip()


def parse_memsize(text: str | None) -> int | None:
    """Bytes of memory from ``sysctl -n hw.memsize`` ("68719476736")."""
    match = re.fullmatch(r"\s*(\d+)\s*", text or "")
    return int(match.group(1)) if match else None


@dataclass(frozen=True)
class DisplayFacts:
    model: str = ""
    cores: int | None = None
    metal_family: str = ""


def parse_displays_json(text: str | None) -> DisplayFacts:
    """The Apple GPU in ``system_profiler SPDisplaysDataType -json``: its model, core count and Metal family.

    Picks the first entry whose model starts with "Apple" (an Intel Mac lists other GPUs); "sppci_cores" is a
    string of digits; the Metal family reads "spdisplays_metal3" and becomes "Metal 3".
    """
    try:
        entries = json.loads(text or "{}").get("SPDisplaysDataType") or []
    except (json.JSONDecodeError, AttributeError):
        return DisplayFacts()
    entries = [e for e in entries if isinstance(e, dict)]
    apple = [e for e in entries if str(e.get("sppci_model") or e.get("_name") or "").startswith("Apple")]
    if not apple:
        return DisplayFacts()
    entry = apple[0]
    cores = re.search(r"\d+", str(entry.get("sppci_cores") or ""))
    family = str(entry.get("spdisplays_mtlgpufamilysupport") or "")
    family_match = re.fullmatch(r"spdisplays_metal(\d+)", family)
    return DisplayFacts(
        model=str(entry.get("sppci_model") or entry.get("_name") or ""),
        cores=int(cores.group(0)) if cores else None,
        metal_family=f"Metal {family_match.group(1)}" if family_match else family,
    )


def run_command(command: list[str]) -> str | None:
    try:
        done = subprocess.run(command, capture_output=True, text=True, timeout=20)
    except (OSError, subprocess.SubprocessError):
        return None
    return done.stdout if done.returncode == 0 else None


def _working_set_bytes() -> int | None:
    import torch

    try:
        return int(torch.mps.recommended_max_memory()) or None
    except Exception:  # no MPS device: the fact is unknown, not an error
        return None


def read_device_facts(run: Run = run_command, working_set: Callable[[], int | None] = _working_set_bytes) -> MetalFacts:
    """This machine's facts; ``run`` and ``working_set`` read them (tests give recorded outputs)."""
    unknown = []
    chip = parse_brand_string(run(["sysctl", "-n", "machdep.cpu.brand_string"]))
    displays = parse_displays_json(run(["system_profiler", "SPDisplaysDataType", "-json"]))
    memory = parse_memsize(run(["sysctl", "-n", "hw.memsize"]))
    if not chip:
        unknown.append("the chip (sysctl machdep.cpu.brand_string gave nothing)")
    if displays.cores is None:
        unknown.append("the GPU core count (system_profiler SPDisplaysDataType lists no Apple GPU cores)")
    if memory is None:
        unknown.append("the memory size (sysctl hw.memsize gave nothing)")
    return MetalFacts(
        chip=chip or displays.model,
        gpu_cores=displays.cores,
        metal_family=displays.metal_family,
        unified_memory_bytes=memory,
        working_set_bytes=working_set(),
        macos=platform.mac_ver()[0],
        unknown=tuple(unknown),
    )
