"""Watching ``torch.mps.compile_shader`` while a candidate is imported, built and called for the first time.

The compile stage needs the source each call compiled (to place the compiler's line numbers in the candidate's
files) and the libraries that came out (to name their kernels). ``torch.mps.compile_shader`` is replaced for that
time by a function that calls it and records what happened; the original is put back when the stage ends.
"""

from __future__ import annotations

import contextlib
from dataclasses import dataclass, field
from typing import Any, Iterator


@dataclass
class CompiledShader:
    """One call of ``compile_shader``: its source, and its library or the compiler's message."""

    source: str
    library: Any = None
    error: str = ""


@dataclass
class ShaderRecorder:
    compiled: list[CompiledShader] = field(default_factory=list)

    @property
    def failed(self) -> CompiledShader | None:
        return next((c for c in reversed(self.compiled) if c.error), None)

    def kernel_names(self) -> list[str]:
        names = []
        for shader in self.compiled:
            if shader.library is not None:
                names += [n for n in dir(shader.library) if not n.startswith("_")]
        return names


@contextlib.contextmanager
def recording_shaders() -> Iterator[ShaderRecorder]:
    import torch

    recorder = ShaderRecorder()
    original = torch.mps.compile_shader

    def compile_shader(source: str) -> Any:
        try:
            library = original(source)
        except SyntaxError as exc:  # what compile_shader raises for a source that does not compile
            recorder.compiled.append(CompiledShader(source, error=exc.msg or str(exc)))
            raise
        recorder.compiled.append(CompiledShader(source, library=library))
        return library

    compile_shader.__doc__ = original.__doc__
    torch.mps.compile_shader = compile_shader
    try:
        yield recorder
    finally:
        torch.mps.compile_shader = original
