"""The worker stages every language on NVIDIA GPUs shares, bound to one language's build routes: the compile stage,
memcheck on a failing verification and Nsight Compute. A language's package makes one and gives its hook methods
the hook names, so the three hooks are written once for ``cuda``, ``triton`` and any language after them::

    STAGES = LanguageStages(build_routes)
    kforge_compile, kforge_verify, kforge_profile = STAGES.kforge_compile, STAGES.kforge_verify, STAGES.kforge_profile
"""

from __future__ import annotations

from typing import Any, Generator

from kforge_core.hookspecs import hookimpl
from kforge_core.records import Backend, Candidate, CompileResult, ProfileResult, StageContext, VerifyResult

from . import compile_stage, profile_stage
from .builds import BuildRoutes, cache_root, inline_building, with_caught_builds
from .sanitize import memcheck_on_failure


class LanguageStages:
    """The NVIDIA layer's stages with ``routes``: how the language's builds are kept and counted (also named in the
    child program the profiler and the sanitizer run, as ``package.stages:build_routes``)."""

    def __init__(self, routes: BuildRoutes) -> None:
        self.routes = routes

    def compile_candidate(self, backend: Backend, candidate: Candidate, context: StageContext) -> CompileResult:
        return compile_stage.compile_candidate(backend, candidate, context, self.routes)

    @hookimpl
    def kforge_compile(self, backend: Backend, candidate: Candidate, context: StageContext) -> CompileResult:
        return self.compile_candidate(backend, candidate, context)

    @hookimpl(wrapper=True)
    def kforge_verify(self, backend: Backend, candidate: Candidate, context: StageContext
                      ) -> Generator[None, Any, VerifyResult | None]:
        """Verification with ``load_inline`` routed as in the compile stage: a call in
        ``ModelNew.__init__`` or ``forward`` (where KernelBench-style solutions often call it) is content-addressed,
        so it finds what was built ahead, counts as a build against the call limit, and a failure the candidate
        catches is flagged as in the compile stage. With ``sanitize`` on, a failing candidate's verdict carries
        compute-sanitizer's memcheck report."""
        options = context.options if context.options is not None else backend.default_options()
        with inline_building(options, cache_root(context), context.timer) as builds:
            result = yield from memcheck_on_failure(backend, candidate, context, self.routes)
        return with_caught_builds(result, builds)

    @hookimpl
    def kforge_profile(self, backend: Backend, candidate: Candidate, context: StageContext) -> ProfileResult | None:
        return profile_stage.profile_candidate(backend, candidate, context, self.routes)
