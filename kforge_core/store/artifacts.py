"""The run directory: the files people read (prompts, replies, candidates, logs, verdicts, summaries).

``RUNS_DIR/RUN_ID/steps/NNN-KIND-LABEL/`` holds one step's files; the run's results (``best.py``, ``report.md``,
``speedup.png``) sit at the top. Everything written passes through :func:`~kforge_core.llm.redact.redact`.
"""

from __future__ import annotations

import re
import shutil
from pathlib import Path

from ..secrets import redact, secret_values
from ..records import SourceFile

_UNSAFE = re.compile(r"[^A-Za-z0-9_.-]+")


class RunDirectory:
    def __init__(self, path: Path) -> None:
        self.path = Path(path)
        self.path.mkdir(parents=True, exist_ok=True)
        self._secrets = secret_values()

    def step_dir(self, seq: int, kind: str, label: str) -> str:
        """A fresh directory for step ``seq`` (emptied if a killed run left it half written); relative path."""
        suffix = "" if label in ("", kind) else "-" + _UNSAFE.sub("_", label)
        name = f"steps/{seq:03d}-{kind}{suffix}"
        target = self.path / name
        if target.exists():
            shutil.rmtree(target)
        target.mkdir(parents=True)
        return name

    def write(self, relative: str, text: str) -> Path:
        target = self.path / relative
        target.parent.mkdir(parents=True, exist_ok=True)
        target.write_text(redact(text, self._secrets))
        return target

    def write_files(self, relative_dir: str, files: tuple[SourceFile, ...]) -> None:
        for f in files:
            self.write(f"{relative_dir}/{f.name}", f.text)

    def copy_in(self, source: Path, relative: str) -> Path:
        target = self.path / relative
        target.parent.mkdir(parents=True, exist_ok=True)
        shutil.copyfile(source, target)
        return target
