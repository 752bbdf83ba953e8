"""Where the builds of one candidate on an NVIDIA GPU go, and what they were: in the worker's compile stage and in
the child program a profiler or sanitizer runs, alike.

Every language's candidates may call ``load_inline``: it is made content-addressed here, keyed on nvcc's version.
What else a language builds goes through its own *build routes*, a context manager it passes in (``load_cuda``'s
cache for ``cuda``, Triton's cache directory for ``triton``), which records each build in :class:`Builds`.
"""

from __future__ import annotations

import contextlib
import dataclasses
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Callable, ContextManager, Iterator

from kforge_core.languages.cuda_cpp.build_cache import BuildOutcome, CudaBuildError
from kforge_core.languages.cuda_cpp.inline_cache import cached_load_inline
from kforge_core.plugin_api import BUILD_ERROR_CAUGHT, StageTimer
from kforge_core.records import Flag, StageContext, VerifyResult

from .toolchain import find_tool, nvcc_version


@dataclass
class Builds:
    """What was built (or failed to build) while one candidate was imported and warmed up.

    :param failure_logs: a language's way to tell its own build errors from the candidate's (a Triton compile
        error): each returns the trimmed log for an exception that is one, else None.
    """

    outcomes: list[BuildOutcome] = field(default_factory=list)
    failures: list[CudaBuildError] = field(default_factory=list)
    inline_failures: list[CudaBuildError] = field(default_factory=list)  # load_inline's: the candidate may catch them
    failure_logs: list[Callable[[BaseException], str | None]] = field(default_factory=list)

    def record(self, item: BuildOutcome | CudaBuildError) -> None:
        (self.failures if isinstance(item, CudaBuildError) else self.outcomes).append(item)

    def record_inline(self, item: BuildOutcome | CudaBuildError) -> None:
        """A ``load_inline`` build: its failure is raised into the candidate as PyTorch's own error, which the
        candidate may catch and go on without it, as under PyTorch."""
        (self.inline_failures if isinstance(item, CudaBuildError) else self.outcomes).append(item)

    def failure_log(self, exc: BaseException) -> str | None:
        """The trimmed log when ``exc`` (or what caused it) is a build failure; None for other errors."""
        if self.failures or self.inline_failures:
            return (self.failures or self.inline_failures)[0].log
        seen: BaseException | None = exc
        while seen is not None:
            if isinstance(seen, CudaBuildError):
                return seen.log
            for language_log in self.failure_logs:
                log = language_log(seen)
                if log is not None:
                    return log
            seen = seen.__cause__ or seen.__context__
        return None


# A language's build routes: (options, cache root, the builds to record into, the stage's timer) -> a context
# within which the candidate's builds go through the language's caches.
BuildRoutes = Callable[[Any, Path, Builds, "StageTimer | None"], ContextManager[None]]


def cache_root(context: StageContext) -> Path:
    """Where NVIDIA builds are kept: ``nvidia`` under the KForge cache directory."""
    return Path(context.cache_dir or Path.home() / ".cache" / "kforge") / "nvidia"


def routes_name(routes: BuildRoutes) -> str:
    """``module:function``: how the child program finds a language's build routes."""
    return f"{routes.__module__}:{routes.__qualname__}"


@contextlib.contextmanager
def building(routes: BuildRoutes, options: Any, root: Path, timer: StageTimer | None = None) -> Iterator[Builds]:
    """Route every build the candidate starts through the caches under ``root`` (the language's routes, and
    ``load_inline``'s, a build on ``timer``), and record them."""
    with inline_building(options, root, timer) as builds, routes(options, root, builds, timer):
        yield builds


@contextlib.contextmanager
def inline_building(options: Any, root: Path, timer: StageTimer | None = None) -> Iterator[Builds]:
    """Only ``load_inline`` content-addressed under ``root`` (a build on ``timer``), and recorded: for the stages
    after compile, where a candidate may still call it (in ``ModelNew.__init__`` or ``forward``)."""
    builds = Builds()
    nvcc = find_tool("nvcc", options.nvcc)
    toolchain = nvcc_version(nvcc) if nvcc else "no nvcc"
    with cached_load_inline(root / "inline", toolchain, builds.record_inline, timer):
        yield builds


def caught_build_flags(builds: Builds) -> tuple[Flag, ...]:
    """A flag per ``load_inline`` build that failed and that the candidate caught, going on without it (its own
    fallback, as under PyTorch): the build log, for the agent to read."""
    return tuple(Flag(BUILD_ERROR_CAUGHT, f"building {f.name!r} failed{' (from the build cache)' if f.cached else ''}"
                                          f" and the candidate went on without it:\n{f.log}", blocking=False)
                 for f in builds.inline_failures)


def with_caught_builds(result: VerifyResult | None, builds: Builds) -> VerifyResult | None:
    """``result`` with the flags of the ``load_inline`` failures the candidate caught while it was verified."""
    flags = caught_build_flags(builds)
    if result is None or not flags:
        return result
    return dataclasses.replace(result, flags=(*result.flags, *flags))
