"""The program a profiler or sanitizer runs: import a built candidate in its scratch directory and call it.

``python -m kforge_nvidia.child --workdir W --entry model_new.py --problem P --cache-root C
--routes kforge_cuda.stages:build_routes --options-type kforge_cuda.options:CudaOptions --options JSON --mode profile``
builds through the same caches as the worker, with the language's build routes (so the candidate loads from the
cache), warms up outside the profiled range, then calls ``forward`` between ``cudaProfilerStart`` and
``cudaProfilerStop`` (ncu runs with ``--profile-from-start off``, so only the candidate's forward is profiled).
The routes and the options' type are named as ``module:name``, so that this program knows no language.
"""

from __future__ import annotations

import argparse
import importlib
import importlib.util
import json
import os
import sys
from pathlib import Path
from typing import Any, Sequence

from kforge_core.plugin_api import DEFAULT_CLASS, record_from_json, to_json

from .builds import BuildRoutes, building, routes_name


def options_to_json(options: Any) -> str:
    return json.dumps(to_json(options))


def options_from_json(options_type: str, text: str) -> Any:
    return record_from_json(resolve(options_type), json.loads(text))


def resolve(name: str) -> Any:
    """The object ``module:qualified.name`` names."""
    module_name, _, attribute = name.partition(":")
    found: Any = importlib.import_module(module_name)
    for part in attribute.split("."):
        found = getattr(found, part)
    return found


def child_command(
    *, workdir: Path, entry: str, problem: Path, cache_root: Path, routes: BuildRoutes, options: Any, mode: str,
    calls: int = 1, candidate_class: str = DEFAULT_CLASS,
) -> list[str]:
    """The command line of this program for one candidate, built with the language's ``routes``."""
    options_type = type(options)
    return [
        sys.executable, "-m", "kforge_nvidia.child", "--workdir", str(workdir), "--entry", entry,
        "--problem", str(problem), "--cache-root", str(cache_root), "--routes", routes_name(routes),
        "--options-type", f"{options_type.__module__}:{options_type.__qualname__}",
        "--options", options_to_json(options), "--mode", mode, "--calls", str(calls),
        "--candidate-class", candidate_class,
    ]


def _import_entry(workdir: Path, entry: str):
    sys.path.insert(0, str(workdir))
    spec = importlib.util.spec_from_file_location("kforge_candidate_child", workdir / entry)
    assert spec is not None and spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    sys.modules[spec.name] = module
    spec.loader.exec_module(module)
    return module


def main(argv: Sequence[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="python -m kforge_nvidia.child")
    for flag in ("--workdir", "--entry", "--problem", "--cache-root", "--routes", "--options-type", "--options"):
        parser.add_argument(flag, required=True)
    parser.add_argument("--mode", choices=("profile", "sanitize"), required=True)
    parser.add_argument("--calls", type=int, default=1)
    parser.add_argument("--candidate-class", default=DEFAULT_CLASS)
    args = parser.parse_args(argv)

    import torch

    from kforge_core.languages.triton import build_model_and_inputs

    workdir = Path(args.workdir)
    os.chdir(workdir)
    options = options_from_json(args.options_type, args.options)
    with building(resolve(args.routes), options, Path(args.cache_root)):
        module = _import_entry(workdir, args.entry)
        model, inputs = build_model_and_inputs(module, Path(args.problem), "cuda", class_name=args.candidate_class)
        with torch.no_grad():
            if args.mode == "profile":
                for _ in range(2):  # JIT, caches and allocator settle outside the profiled range
                    model(*inputs)
                torch.cuda.synchronize()
                torch.cuda.profiler.start()
            for _ in range(args.calls):
                model(*inputs)
            torch.cuda.synchronize()
            if args.mode == "profile":
                torch.cuda.profiler.stop()
    return 0


if __name__ == "__main__":
    sys.exit(main())
