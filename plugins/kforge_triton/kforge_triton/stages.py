"""The triton backend's worker stages: the NVIDIA layer's stages (compile, memcheck on a failing
verification, Nsight Compute) with this language's build routes: Triton's kernel cache under the KForge cache directory,
and the first call's compilations counted as this candidate's builds (Triton compiles on the first call)."""

from __future__ import annotations

import contextlib
import sys
import time
from pathlib import Path
from typing import Iterator

from kforge_core.languages import triton as triton_language
from kforge_core.languages.cuda_cpp.build_cache import BuildOutcome
from kforge_core.plugin_api import StageTimer
from kforge_nvidia.builds import Builds
from kforge_nvidia.language_stages import LanguageStages

from .backend import TritonOptions


def triton_build_log(exc: BaseException) -> str | None:
    """Triton's compile error, trimmed; None for any other error."""
    if triton_language.is_build_error(exc):
        return triton_language.trim_error(f"{type(exc).__name__}: {exc}")
    return None


@contextlib.contextmanager
def build_routes(options: TritonOptions, root: Path, builds: Builds, timer: StageTimer | None = None
                 ) -> Iterator[None]:
    """Within the block Triton keeps its kernels under ``root``; at its end, whether the first call compiled any
    is recorded into ``builds``."""
    cache = triton_language.use_cache_dir(root / "triton")
    before = triton_language.cache_entries(cache)
    builds.failure_logs.append(triton_build_log)
    start = time.perf_counter()
    yield
    if "triton" in sys.modules and options.warmup_forward:  # compiled on the first call, or found every kernel
        compiled = bool(triton_language.cache_entries(cache) - before)
        builds.record(BuildOutcome(cache, "triton", not compiled, time.perf_counter() - start))


STAGES = LanguageStages(build_routes)
compile_candidate = STAGES.compile_candidate
kforge_compile, kforge_verify, kforge_profile = STAGES.kforge_compile, STAGES.kforge_verify, STAGES.kforge_profile
