"""Records what the CuTe DSL raises for the broken kernels in ``dsl_errors/``, as the fixtures the error-trimming
tests read. Needs the DSL, no GPU (``CUTE_DSL_ARCH`` names the target):

    CUTE_DSL_ARCH=sm_90a python plugins/kforge_cute/tests/record_dsl_errors.py

Each kernel is compiled through the compile cache the worker uses, from a scratch directory, so each fixture holds
the error chain and, where the DSL's message named no line of the candidate, the chain of the retry with MLIR
locations on. Paths under the scratch directory are written as ``{workdir}``.
"""

from __future__ import annotations

import dataclasses
import datetime
import importlib.util
import json
import os
import platform
import shutil
import tempfile
from pathlib import Path

HERE = Path(__file__).resolve().parent
SNIPPETS = HERE / "dsl_errors"
FIXTURES = HERE / "fixtures"


def _chain_json(chain, workdir: str) -> list[dict]:
    text = json.dumps([dataclasses.asdict(part) for part in chain])
    return json.loads(text.replace(workdir, "{workdir}"))


def record(snippet: Path, scratch: Path) -> dict:
    import cutlass
    import torch
    from cutlass.cute.runtime import from_dlpack

    from kforge_cute.compile_cache import install
    from kforge_cute.dsl_errors import error_chain

    workdir = scratch / snippet.stem
    workdir.mkdir()
    shutil.copy(snippet, workdir / snippet.name)
    session = install(source=snippet.stem, workdir=workdir, directory=None)
    spec = importlib.util.spec_from_file_location(f"snippet_{snippet.stem}", workdir / snippet.name)
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    import cutlass.cute as cute

    try:
        cute.compile(module.launch, from_dlpack(torch.randn(64)), from_dlpack(torch.empty(16)))
    except Exception:
        pass
    failure = session.failures[0]
    return {
        "recorded": f"tests/record_dsl_errors.py, nvidia-cutlass-dsl {cutlass.__version__}, "
                    f"CUTE_DSL_ARCH={os.environ.get('CUTE_DSL_ARCH', '(device)')}, Python {platform.python_version()}, "
                    f"{datetime.date.today().isoformat()}",
        "snippet": snippet.name,
        "chain": _chain_json(error_chain(failure.error, workdir), str(workdir)),
        "located": _chain_json(error_chain(failure.located, workdir), str(workdir)) if failure.located else [],
    }


def main() -> None:
    with tempfile.TemporaryDirectory() as scratch:
        for snippet in sorted(SNIPPETS.glob("*.py")):
            fixture = record(snippet, Path(scratch))
            (FIXTURES / f"dsl_{snippet.stem}.json").write_text(json.dumps(fixture, indent=1) + "\n")
            print(f"{snippet.stem}: {fixture['chain'][0]['kind']}, located: {bool(fixture['located'])}")


if __name__ == "__main__":
    main()
