"""Reading the ``extern "C"`` functions of a CUDA source, so that ctypes can call them with the right types.

Only the simple types a host launcher needs are accepted: pointers (any ``T*``), integers, floats, ``bool`` and
``cudaStream_t``. Anything else is reported by name, with the function, before anything is called.
"""

from __future__ import annotations

import ctypes
import re
from dataclasses import dataclass

_SCALARS: dict[str, type] = {
    "int": ctypes.c_int, "signed": ctypes.c_int, "signed int": ctypes.c_int, "int32_t": ctypes.c_int32,
    "unsigned": ctypes.c_uint, "unsigned int": ctypes.c_uint, "uint32_t": ctypes.c_uint32,
    "long": ctypes.c_long, "long int": ctypes.c_long, "unsigned long": ctypes.c_ulong,
    "long long": ctypes.c_longlong, "long long int": ctypes.c_longlong, "int64_t": ctypes.c_int64,
    "unsigned long long": ctypes.c_ulonglong, "uint64_t": ctypes.c_uint64, "size_t": ctypes.c_size_t,
    "ptrdiff_t": ctypes.c_ssize_t, "short": ctypes.c_short, "char": ctypes.c_char,
    "float": ctypes.c_float, "double": ctypes.c_double, "bool": ctypes.c_bool,
    "cudaError_t": ctypes.c_int, "cudaStream_t": ctypes.c_void_p,
}
_QUALIFIERS = {"const", "volatile", "__restrict__", "restrict", "__restrict", "struct", "__host__", "static", "inline"}
_EXTERN_C = re.compile(r'extern\s+"C"\s+(?:__host__\s+)?(?P<ret>[\w\s\*]+?)\s*\b(?P<name>\w+)\s*\((?P<params>[^)]*)\)\s*\{')
_COMMENTS = re.compile(r"//[^\n]*|/\*.*?\*/", re.S)


@dataclass(frozen=True)
class Param:
    name: str
    c_type: str
    is_pointer: bool
    is_stream: bool

    @property
    def ctype(self) -> type:
        return ctypes.c_void_p if self.is_pointer else _SCALARS[self.c_type]


@dataclass(frozen=True)
class CFunction:
    name: str
    returns: str  # "void" or a scalar type name
    params: tuple[Param, ...]

    @property
    def restype(self) -> type | None:
        return None if self.returns == "void" else _SCALARS[self.returns]

    def declaration(self) -> str:
        args = ", ".join(f"{p.c_type}{'*' if p.is_pointer else ''} {p.name}" for p in self.params)
        return f"{self.returns} {self.name}({args})"


class SignatureError(ValueError):
    """An exported function whose types ctypes cannot pass."""


def _base_type(text: str) -> tuple[str, bool]:
    pointer = "*" in text or "[" in text
    words = [w for w in re.sub(r"[\*\[\]&]", " ", text).split() if w not in _QUALIFIERS]
    return " ".join(words), pointer


def _parse_param(function: str, index: int, text: str) -> Param:
    text = text.split("=")[0].strip()  # default arguments do not apply through ctypes
    match = re.match(r"^(?P<type>.*?)(?P<name>\w+)\s*(\[\s*\])?$", text, re.S)
    if match is None or not match.group("type").strip():
        raise SignatureError(f'{function}: cannot read parameter {index + 1} "{text}"; give it a type and a name')
    c_type, pointer = _base_type(match.group("type") + ("[]" if match.group(3) else ""))
    if not pointer and c_type not in _SCALARS:
        raise SignatureError(
            f'{function}: parameter "{text}" has type {c_type!r}; exported functions take pointers, integers, '
            "float, double, bool or cudaStream_t"
        )
    return Param(match.group("name"), c_type, pointer, c_type == "cudaStream_t" and not pointer)


def parse_exports(source: str) -> dict[str, CFunction]:
    """Every ``extern "C"`` function defined in ``source``, by name."""
    found: dict[str, CFunction] = {}
    for match in _EXTERN_C.finditer(_COMMENTS.sub(" ", source)):
        name = match.group("name")
        returns, ret_pointer = _base_type(match.group("ret"))
        if ret_pointer or (returns != "void" and returns not in _SCALARS):
            raise SignatureError(f"{name}: return type {match.group('ret').strip()!r}; return void, int or cudaError_t")
        params_text = match.group("params").strip()
        pieces = [] if params_text in ("", "void") else params_text.split(",")
        params = tuple(_parse_param(name, i, piece) for i, piece in enumerate(pieces))
        found[name] = CFunction(name, returns, params)
    return found
