"""The cuda backend's worker stages: the NVIDIA layer's stages (compile, memcheck on a failing
verification, Nsight Compute) with this language's build routes: ``load_cuda`` builds through its content-hash cache
(:mod:`.build_config`), in the worker and in the child program the profiler and the sanitizer run alike."""

from __future__ import annotations

import contextlib
from pathlib import Path
from typing import Iterator

from kforge_core.plugin_api import StageTimer
from kforge_nvidia.builds import Builds
from kforge_nvidia.language_stages import LanguageStages

from . import runtime
from .build_config import build_config
from .options import CudaOptions


@contextlib.contextmanager
def build_routes(options: CudaOptions, root: Path, builds: Builds, timer: StageTimer | None = None) -> Iterator[None]:
    """Within the block, ``load_cuda`` builds with the options' flags under ``root`` and records into ``builds``."""
    with runtime.build_session(build_config(options, root), builds.record):
        yield


STAGES = LanguageStages(build_routes)
compile_candidate = STAGES.compile_candidate
kforge_compile, kforge_verify, kforge_profile = STAGES.kforge_compile, STAGES.kforge_verify, STAGES.kforge_profile
