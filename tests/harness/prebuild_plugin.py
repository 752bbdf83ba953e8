"""A test plugin whose backends build ahead, to show what the harness does with ``kforge_prebuild``.

``torch-cpu-ahead`` builds ahead: its prebuild leaves a mark (the building process's id) in the cache directory,
and its compile says whether it found the mark. A candidate whose source contains ``PREBUILD_HANG`` hangs its
build; one containing ``PREBUILD_SLOW`` marks its start (``.started``) and takes a second. Each build records when
it ended (``.ended``, ``time.time()``) and for which problem (``.problem``). ``torch-cpu-jit`` answers None: it has nothing to build ahead. Both are served by the core's generic
verify and timing.
"""

from __future__ import annotations

import os
import time
from pathlib import Path

from kforge_core import Availability, Backend, CompileResult, hookimpl
from kforge_core.candidate_module import import_candidate

AHEAD = Backend(name="torch-cpu-ahead", programming_model="PyTorch", device="cpu",
                description="builds candidates ahead")
JIT = Backend(name="torch-cpu-jit", programming_model="PyTorch", device="cpu",
              description="nothing to build ahead")


def mark(cache_dir: Path, digest: str) -> Path:
    """Where the build of ``digest`` leaves its mark: where the harness keeps builds (here Inductor's FX graph
    cache). A build ahead that ends while another candidate is evaluated lands in that candidate's window of the
    build caches, where whatever is not a build is removed as the candidate's own junk (``cache_quota.py``)."""
    return Path(cache_dir) / "inductor" / "fxgraph" / "prebuilt" / digest


@hookimpl
def kforge_register_backends(register):
    register(AHEAD)
    register(JIT)


@hookimpl
def kforge_backend_availability(backend):
    return Availability.yes("the host CPU")


@hookimpl
def kforge_prebuild(backend, candidate, context):
    if backend.name != AHEAD.name:
        return None
    path = mark(context.cache_dir, candidate.digest)
    path.parent.mkdir(parents=True, exist_ok=True)
    if "PREBUILD_HANG" in candidate.files[0].text:
        path.with_suffix(".hanging").write_text(str(os.getpid()))
        time.sleep(3600)
    if "PREBUILD_SLOW" in candidate.files[0].text:
        path.with_suffix(".started").write_text(str(time.time()))
        time.sleep(1.0)
    path.write_text(str(os.getpid()))
    path.with_suffix(".problem").write_text(context.problem.name)  # the problem it was built for
    path.with_suffix(".ended").write_text(str(time.time()))
    return CompileResult(ok=True, log="built ahead")


@hookimpl
def kforge_compile(backend, candidate, context):
    start = time.perf_counter()
    found = mark(context.cache_dir, candidate.digest).is_file()
    import_candidate(candidate, context.workdir)
    log = f"{'found built ahead' if found else 'built now'} (pid {os.getpid()})"
    return CompileResult(ok=True, log=log, cached=found, seconds=time.perf_counter() - start)
