"""The child process that builds one candidate ahead: ``python -m kforge_core.harness.worker.prebuild_child DIR``.

``DIR/request.pickle`` (written by the KForge process) says what to build; the child writes the candidate's files
into ``DIR/files``, calls ``kforge_prebuild`` there and writes its answer to ``DIR/result.json``. The candidate's
code is never imported here: the hook reads its sources.
"""

from __future__ import annotations

import json
import os
import pickle
import sys
import time
from pathlib import Path
from typing import Any

from ...codec import to_json
from ..protocol import FILES_DIR, REQUEST_FILE, RESULT_FILE, PrebuildRequest
from .limit_hits import know_limits


def run(directory: Path) -> dict[str, Any]:
    """Build the request in ``directory``; the answer as plain data (``{"answered": False}`` for None)."""
    request: PrebuildRequest = pickle.loads((directory / REQUEST_FILE).read_bytes())
    init = request.init
    know_limits(init.settings.max_processes, init.sandbox.tmpfs_sizes() if init.sandbox is not None else {})
    for entry in init.sys_path:
        if entry not in sys.path:
            sys.path.append(entry)
    from ...plugins import build_plugin_manager
    from ...records import StageContext
    from ...registry import BackendRegistry

    loaded = build_plugin_manager(init.selection)
    registry = BackendRegistry(loaded)
    backend = registry.get(init.backend).backend
    workdir = directory / FILES_DIR
    request.candidate.write_to(workdir)
    os.chdir(workdir)
    context = StageContext(problem=request.problem, workdir=workdir, options=init.options, cache_dir=init.cache_dir,
                           settings=init.settings)
    start = time.perf_counter()
    result = registry.hooks(init.backend).caller("prebuild")(backend=backend, candidate=request.candidate,
                                                             context=context)
    if result is None:
        return {"answered": False, "seconds": time.perf_counter() - start}
    return {"answered": True, "result": to_json(result)}


def main(argv: list[str] | None = None) -> int:
    args = sys.argv[1:] if argv is None else argv
    if len(args) != 1:
        print("usage: python -m kforge_core.harness.worker.prebuild_child DIR", file=sys.stderr)
        return 2
    directory = Path(args[0]).resolve()
    answer = run(directory)
    (directory / RESULT_FILE).write_text(json.dumps(answer))
    return 0


if __name__ == "__main__":
    sys.exit(main())
