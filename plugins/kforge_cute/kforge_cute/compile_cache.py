"""``cute.compile`` with a cache: in this process across candidates, and on disk across processes.

:func:`install` puts a stand-in for ``cutlass.cute.compile`` in place before a candidate is imported (so
``from cutlass.cute import compile`` gets it too). Each call is keyed (:mod:`compile_key`); a key seen before in
this process returns the compiled function it gave then; else, with a directory, an object file exported by an
earlier process is loaded (the DSL's own AOT form: ``export_to_c`` then ``cute.runtime.load_module``); else the
DSL compiles and the result is kept in both places. ``cute.compile`` itself caches nothing (it compiles with the
DSL's cache off), so a second evaluation of a candidate would otherwise trace and compile every kernel again.

Every call is recorded for the compile stage: what it cost and where it came from, and each failure with, when
the DSL's message did not say where in the candidate it happened, the same compile retried with MLIR source
locations on (``CUTE_DSL_LOC_TRACEBACKS``), which names the candidate's lines.
"""

from __future__ import annotations

import os
import tempfile
import time
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from .compile_key import Unkeyable, compile_key, function_name
from .dsl_errors import error_chain, names_candidate

LOCATION_DEPTH = 16
OUTCOMES = {
    "compiled": "compiled",
    "memory": "found in this process's cache",
    "disk": "loaded from the disk cache",
    "uncached": "compiled without the cache",
}


@dataclass(frozen=True)
class CompileEvent:
    function: str
    outcome: str  # a key of OUTCOMES
    seconds: float
    note: str = ""

    @property
    def cached(self) -> bool:
        return self.outcome in ("memory", "disk")

    def line(self) -> str:
        note = f" ({self.note})" if self.note else ""
        return f"cute.compile {self.function}: {OUTCOMES[self.outcome]} in {self.seconds:.3f} s{note}"


@dataclass(frozen=True)
class CompileFailure:
    function: str
    error: BaseException
    located: BaseException | None = None  # the same compile with MLIR locations on, when the first had none


@dataclass
class CompileSession:
    """What the ``cute.compile`` calls of one candidate did."""

    events: list[CompileEvent] = field(default_factory=list)
    failures: list[CompileFailure] = field(default_factory=list)


def _dsl() -> Any:
    from cutlass.cutlass_dsl import CuTeDSL

    return CuTeDSL._get_dsl()


def dsl_settings() -> str:
    """The DSL's settings that change what it compiles, the target arch among them."""
    return _dsl().envar.cache_key_str()


class CuteCompileCache:
    """One per process: the compiled functions of every candidate this process has seen."""

    def __init__(self) -> None:
        self.memory: dict[str, Any] = {}
        self.directory: Path | None = None
        self.source = ""
        self.workdir: Path | None = None
        self.session = CompileSession()

    def start(self, *, source: str, workdir: Path, directory: Path | None) -> CompileSession:
        """Begin a candidate: its source digest keys its compiles; its failures name lines under ``workdir``."""
        self.source, self.workdir, self.directory = source, workdir, directory
        if directory is not None:
            directory.mkdir(parents=True, exist_ok=True)
        self.session = CompileSession()
        return self.session

    def compile(self, original: Any, selector: str, func: Any, args: tuple, kwargs: dict) -> Any:
        import cutlass

        start = time.perf_counter()
        name = function_name(func)
        try:
            key = compile_key(func, args, kwargs, source=self.source, selector=selector,
                              dsl_version=cutlass.__version__, dsl_settings=dsl_settings()).digest()
        except Unkeyable as exc:
            compiled = self._compile(original, func, args, kwargs)
            self._record(name, "uncached", start, f"an argument of type {exc} has no compile-time key")
            return compiled
        if key in self.memory:
            self._record(name, "memory", start)
            return self.memory[key]
        loaded, note = self._load(key)
        if loaded is not None:
            self.memory[key] = loaded
            self._record(name, "disk", start)
            return loaded
        compiled = self._compile(original, func, args, kwargs)
        self.memory[key] = compiled
        seconds = time.perf_counter() - start
        note = self._store(key, compiled) or note
        self.session.events.append(CompileEvent(name, "compiled", seconds, note))
        return compiled

    def _record(self, name: str, outcome: str, start: float, note: str = "") -> None:
        self.session.events.append(CompileEvent(name, outcome, time.perf_counter() - start, note))

    def _compile(self, original: Any, func: Any, args: tuple, kwargs: dict) -> Any:
        try:
            return original(func, *args, **kwargs)
        except Exception as exc:
            located = None
            if self.workdir is None or not names_candidate(error_chain(exc, self.workdir), self.workdir):
                located = self._compile_with_locations(original, func, args, kwargs)
            self.session.failures.append(CompileFailure(function_name(func), exc, located))
            raise

    def _compile_with_locations(self, original: Any, func: Any, args: tuple, kwargs: dict) -> BaseException | None:
        envar = _dsl().envar
        previous = envar.loc_tracebacks
        envar.loc_tracebacks = LOCATION_DEPTH
        try:
            original(func, *args, **kwargs)
        except Exception as exc:
            return exc
        finally:
            envar.loc_tracebacks = previous
        return None

    def _paths(self, key: str) -> tuple[Path, Path] | None:
        """Where a compiled function is kept: the DSL's own object form, and the TVM-FFI one."""
        if self.directory is None:
            return None
        return self.directory / f"{key}.o", self.directory / f"{key}.tvm.o"

    def _load(self, key: str) -> tuple[Any, str]:
        paths = self._paths(key)
        found = [(path, tvm) for path, tvm in zip(paths or (), (False, True)) if path.is_file()]
        if not found:
            return None, ""
        import cutlass.cute as cute

        path, tvm = found[0]
        try:
            return cute.runtime.load_module(str(path), enable_tvm_ffi=tvm)[_symbol_prefix(key)], ""
        except Exception as exc:  # an entry from a broken write or another DSL build: compile instead
            return None, f"the disk entry could not be loaded ({type(exc).__name__}), so it was compiled again"

    def _store(self, key: str, compiled: Any) -> str:
        """Export ``compiled`` as an object file; a note when it could not be. A function compiled for TVM-FFI
        (``options="--enable-tvm-ffi"``) is exported in TVM-FFI's form, and loaded back as a TVM-FFI function."""
        paths = self._paths(key)
        if paths is None:
            return ""
        tvm = type(compiled).__name__.startswith("TVMFFI")
        try:
            with tempfile.TemporaryDirectory(dir=paths[0].parent) as scratch:
                if tvm:
                    compiled.export_to_c(str(Path(scratch) / "kernel.o"), function_name=_symbol_prefix(key))
                else:
                    compiled.export_to_c(scratch, "kernel", function_prefix=_symbol_prefix(key))
                os.replace(Path(scratch) / "kernel.o", paths[tvm])
        except Exception as exc:
            return f"not kept on disk: {type(exc).__name__}: {str(exc).strip().splitlines()[0][:200]}"
        return ""


def _symbol_prefix(key: str) -> str:
    return f"kforge_cute_{key}"


class CachingCompile:
    """Stands in for ``cutlass.cute.compile``: calls go through the cache, everything else to the original."""

    def __init__(self, original: Any, cache: CuteCompileCache, selector: str = "") -> None:
        self._original = original
        self._cache = cache
        self._selector = selector

    def __call__(self, func: Any, *args: Any, **kwargs: Any) -> Any:
        return self._cache.compile(self._original, self._selector, func, args, kwargs)

    def __getitem__(self, options: Any) -> CachingCompile:  # cute.compile[cute.GenerateLineInfo(True)](...)
        return CachingCompile(self._original[options], self._cache, f"{self._selector}[{options!r}]")

    def __getattr__(self, name: str) -> Any:
        return getattr(self._original, name)


def install(*, source: str, workdir: Path, directory: Path | None) -> CompileSession:
    """Route this process's ``cute.compile`` through its cache (once) and start a candidate's session."""
    import cutlass.cute as cute

    if not isinstance(cute.compile, CachingCompile):
        cute.compile = CachingCompile(cute.compile, CuteCompileCache())
    return cute.compile._cache.start(source=source, workdir=workdir, directory=directory)
