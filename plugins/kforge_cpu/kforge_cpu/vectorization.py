"""Did a kernel's hot loops vectorise? Read from the x86-64 assembly Numba generated (``inspect_asm``).

A loop is a backward jump to a label of the same function; the hot loops are the innermost ones (no other loop
inside). In each, the floating-point arithmetic is counted by form: packed (``vaddps``, ``vfmadd231ps`` on
xmm/ymm/zmm: several lanes per instruction) or scalar (``vaddss``, ``vmaxsd``: one lane). LLVM follows a vectorised
loop with a scalar remainder loop doing the same operations on the last few elements; a scalar loop whose
operations all appear packed in another loop of the function is counted as such a remainder, not as a failure to
vectorise. float32 <-> float64 conversions (``vcvtss2sd``) and calls (``exp`` without SVML) are counted too.
The Python-facing wrappers Numba generates (``cpython.``, ``cfunc.``, ``NRT_``) are skipped.
"""

from __future__ import annotations

import dataclasses
import platform
import re
from dataclasses import dataclass
from typing import Any

FUNCTION = re.compile(r"^([A-Za-z_][\w.$]*):")
LABEL = re.compile(r"^(\.L\w+):")
JUMP = re.compile(r"^\s+j\w+\s+(\.L\w+)\s*$")
INSTRUCTION = re.compile(r"^\s+([a-z][a-z0-9]*)\b(.*)$")
FP_ARITH = re.compile(
    r"^v?(add|sub|mul|div|sqrt|max|min|rcp|rsqrt|hadd|hsub|f?n?m(?:add|sub)(?:sub|add)?\d*)(ps|pd|ss|sd)$"
)
CONVERSION = re.compile(r"^v?cvt(ss2sd|ps2pd|sd2ss|pd2ps)$")
WRAPPERS = ("_ZN7cpython", "cfunc.", "NRT_", "printf_format")
REGISTER_BITS = (("%zmm", 512), ("%ymm", 256), ("%xmm", 128))


@dataclass(frozen=True)
class LoopMix:
    """The instruction mix of one innermost loop."""

    label: str
    function: str
    packed: int  # packed floating-point arithmetic instructions
    scalar: int  # scalar floating-point arithmetic instructions
    width_bits: int  # widest register of a packed instruction (0 when none)
    conversions: int  # float32 <-> float64 conversions
    calls: int
    float64_ops: int  # arithmetic in double precision (sd/pd)
    packed_bases: frozenset[str]  # "add", "fmadd" ...
    scalar_bases: frozenset[str]
    mnemonics: tuple[str, ...]  # the arithmetic, conversion and call instructions seen, sorted
    remainder: bool = False

    @property
    def kind(self) -> str:
        if self.packed and not self.scalar:
            return "vector"
        if self.scalar and not self.packed:
            return "remainder" if self.remainder else "scalar"
        return "mixed" if self.packed else "no-fp"

    def describe(self) -> str:
        width = f"{self.width_bits}-bit" if self.width_bits else "-"
        return (f"{self.label:<10} {self.kind:<9} packed {self.packed:>3}  scalar {self.scalar:>3}  widest {width:<7} "
                f"f32<->f64 {self.conversions:>2}  calls {self.calls:>2}  {' '.join(self.mnemonics)}")


@dataclass(frozen=True)
class Vectorization:
    """A kernel's hot loops, classified."""

    loops: tuple[LoopMix, ...]  # innermost loops with floating-point work

    def count(self, kind: str) -> int:
        return sum(1 for loop in self.loops if loop.kind == kind)

    @property
    def verdict(self) -> str:
        vector, scalar = self.count("vector") + self.count("mixed"), self.count("scalar")
        if not self.loops:
            return "no floating-point loops"
        if vector and not scalar:
            return "vectorised"
        return "partly vectorised" if vector else "not vectorised"

    @property
    def width_bits(self) -> int:
        return max((loop.width_bits for loop in self.loops), default=0)

    @property
    def conversions(self) -> int:
        return sum(loop.conversions for loop in self.loops)

    @property
    def loops_with_calls(self) -> int:
        return sum(1 for loop in self.loops if loop.calls)

    @property
    def float64_ops(self) -> int:
        return sum(loop.float64_ops for loop in self.loops)

    def describe(self) -> str:
        return "\n".join(loop.describe() for loop in self.loops) or "no innermost floating-point loops"


def supported() -> bool:
    return platform.machine().lower() in ("x86_64", "amd64")


def _functions(asm: str) -> list[tuple[str, list[str]]]:
    functions: list[tuple[str, list[str]]] = []
    for line in asm.splitlines():
        match = FUNCTION.match(line)
        if match and not line.startswith("."):
            functions.append((match.group(1), []))
        elif functions and not line.lstrip().startswith((".cfi", ".p2align", "#")):
            functions[-1][1].append(line)
    return [(name, body) for name, body in functions if not name.startswith(WRAPPERS)]


def _innermost_loops(body: list[str]) -> list[tuple[str, int, int]]:
    labels = {m.group(1): i for i, line in enumerate(body) if (m := LABEL.match(line))}
    loops = []
    for i, line in enumerate(body):
        jump = JUMP.match(line)
        if jump and jump.group(1) in labels and labels[jump.group(1)] < i:
            loops.append((jump.group(1), labels[jump.group(1)], i))
    return [
        (label, start, end) for label, start, end in loops
        if not any(s >= start and e <= end and (s, e) != (start, end) for _, s, e in loops)
    ]


def _mix(function: str, label: str, lines: list[str]) -> LoopMix:
    packed = scalar = conversions = calls = float64_ops = width = 0
    packed_bases: set[str] = set()
    scalar_bases: set[str] = set()
    seen: set[str] = set()
    for line in lines:
        match = INSTRUCTION.match(line)
        if not match:
            continue
        mnemonic, operands = match.groups()
        if mnemonic.startswith("call"):
            calls += 1
            seen.add("call")
        elif CONVERSION.match(mnemonic):
            conversions += 1
            seen.add(mnemonic)
        elif arith := FP_ARITH.match(mnemonic):
            seen.add(mnemonic)
            base, form = arith.groups()
            base = base.rstrip("0123456789")  # vfmadd213ss and vfmadd231ps are the same operation
            float64_ops += form in ("pd", "sd")
            if form in ("ps", "pd"):
                packed += 1
                packed_bases.add(base)
                width = max(width, next((bits for reg, bits in REGISTER_BITS if reg in operands), 0))
            else:
                scalar += 1
                scalar_bases.add(base)
    return LoopMix(label, function, packed, scalar, width, conversions, calls, float64_ops,
                   frozenset(packed_bases), frozenset(scalar_bases), tuple(sorted(seen)))


def analyse_asm(asm: str) -> Vectorization:
    loops: list[LoopMix] = []
    for function, body in _functions(asm):
        mixes = [_mix(function, label, body[start:end + 1]) for label, start, end in _innermost_loops(body)]
        vector_ops = set().union(*(m.packed_bases for m in mixes if m.packed))
        for mix in mixes:
            if mix.packed + mix.scalar == 0:
                continue
            if mix.scalar and not mix.packed and mix.scalar_bases <= vector_ops:
                mix = dataclasses.replace(mix, remainder=True)
            loops.append(mix)
    return Vectorization(tuple(loops))


def kernel_vectorization(dispatcher: Any, signature: Any) -> Vectorization:
    return analyse_asm(dispatcher.inspect_asm(signature))
