"""Where a shader's lines are in the candidate's Python files.

The Metal compiler numbers the lines of the source it compiled. That source is a string of the candidate's
Python file (usually a triple-quoted literal), after ``torch.mps.compile_shader`` replaced each ``#include`` of
PyTorch's own headers (``<c10/metal/utils.h>``) by the header's text. A compiler line is placed back in two steps:
the header expansion is undone (:func:`expansion_origins`), then the line of the shader string is found in the
file by reading the file's string literals (:func:`shader_strings`), without running the candidate.
"""

from __future__ import annotations

import ast
import bisect
import re
from dataclasses import dataclass
from pathlib import Path

from kforge_core.plugin_api import parsed_python_files
from kforge_core.records import Candidate


_KERNEL = re.compile(r"\bkernel\s+void\s+\w+\s*\(|\[\[\s*kernel\s*\]\]")


@dataclass(frozen=True)
class ShaderString:
    """A string literal of the candidate.

    :param file: the candidate's file that holds it.
    :param line: the file line of the string's first character.
    :param exact: True when each line of the string is one line of the file (a plain triple-quoted literal), so
        that string line ``n`` is file line ``line + n - 1``.
    :param value: the string.
    """

    file: str
    line: int
    exact: bool
    value: str

    def file_line(self, string_line: int) -> str:
        if self.exact:
            return f"{self.file}:{self.line + string_line - 1}"
        return f"line {string_line} of the string at {self.file}:{self.line}"


def shader_strings(candidate: Candidate) -> list[ShaderString]:
    """Every string literal of the candidate's Python files that holds a Metal kernel."""
    found = []
    for file, tree in parsed_python_files(candidate):
        for node in ast.walk(tree):
            if isinstance(node, ast.Constant) and isinstance(node.value, str) and _KERNEL.search(node.value):
                span = (node.end_lineno or node.lineno) - node.lineno
                found.append(ShaderString(file.name, node.lineno, span == node.value.count("\n"), node.value))
    return found


@dataclass(frozen=True)
class Origin:
    """Where one line of the compiled (header-expanded) source came from."""

    line: int  # the line of the source the candidate passed to compile_shader
    header: str = ""  # set when the line is inside this embedded header


def _embedder():
    """torch's own header embedding and its include directory, or None where this torch has none."""
    try:
        import torch
        from torch.utils._cpp_embed_headers import _embed_headers
    except ImportError:
        return None
    return _embed_headers, [Path(torch.mps.__file__).parent.parent / "include"]


def expansion_origins(source: str) -> list[Origin]:
    """For each line of what ``compile_shader`` compiles for ``source``, the ``source`` line it came from.

    ``compile_shader`` embeds headers line by line (``_embed_headers`` over ``source.split("\\n")`` with one
    set of headers already embedded); doing the same one line at a time tells which expanded lines each source
    line became. Without torch's embedding function, the lines are their own origin.
    """
    lines = source.split("\n")
    embedder = _embedder()
    if embedder is None:
        return [Origin(n) for n in range(1, len(lines) + 1)]
    embed, include_dirs = embedder
    processed: set[str] = set()
    pieces = [embed([line + "\n"], include_dirs, processed) for line in lines]
    starts, text_length = [], 0
    for piece in pieces:
        starts.append(text_length)
        text_length += len(piece)
    expanded = "".join(pieces)
    origins = []
    offset = 0
    for expanded_line in expanded.split("\n")[:-1]:  # the last "\n" ends the text
        index = bisect.bisect_right(starts, offset) - 1
        while index + 1 < len(pieces) and not pieces[index]:
            index += 1
        own = pieces[index] == lines[index] + "\n"
        origins.append(Origin(index + 1, "" if own else _header_name(lines[index])))
        offset += len(expanded_line) + 1
    return origins


def _header_name(include_line: str) -> str:
    text = include_line.strip()
    for opening, closing in (("<", ">"), ('"', '"')):
        if opening in text:
            return text.split(opening, 1)[1].split(closing, 1)[0]
    return text


class ShaderLocator:
    """Places the compiler's line numbers for one compiled ``source`` in the candidate's files."""

    def __init__(self, source: str, strings: list[ShaderString]) -> None:
        self.origins = expansion_origins(source)
        self.pieces = []  # (first source line covered, ShaderString)
        for string in strings:
            at = source.find(string.value) if string.value else -1
            if at >= 0:
                self.pieces.append((source.count("\n", 0, at) + 1, string))

    def __call__(self, compiled_line: int) -> str:
        if 1 <= compiled_line <= len(self.origins):
            origin = self.origins[compiled_line - 1]
        else:
            origin = Origin(compiled_line)
        where = self._in_files(origin.line)
        if origin.header:
            return f"inside <{origin.header}>, included at {where}"
        return where

    def _in_files(self, source_line: int) -> str:
        for first, string in sorted(self.pieces, key=lambda piece: -len(piece[1].value)):
            last = first + string.value.count("\n")
            if first <= source_line <= last:
                return f"{string.file_line(source_line - first + 1)} (shader line {source_line})"
        return f"shader line {source_line}"
