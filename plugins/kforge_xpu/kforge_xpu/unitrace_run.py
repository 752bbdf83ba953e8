"""Running Intel's ``unitrace`` on a program and collecting everything it wrote.

unitrace runs the program with ``--conditional-collection``: nothing is recorded until the program sets
``PTI_ENABLE_COLLECTION=1`` (the profile child does, around the forwards it profiles), so warm-up calls and
start-up stay out of the profile. ``-d -v`` gives kernel times and properties; ``-q -g GROUP`` the hardware metrics
of each kernel instance. unitrace names its output files after the process, so every file it leaves in the
output directory is read, together with its console output.
"""

from __future__ import annotations

import os
import shutil
import subprocess
from dataclasses import dataclass
from pathlib import Path

MAX_TEXT_CHARS = 400_000


class UnitraceError(Exception):
    """unitrace could not profile the program; the message carries the end of its output."""


@dataclass(frozen=True)
class UnitraceRun:
    text: str  # the console output and every file unitrace wrote, one after another
    files: tuple[Path, ...]


def find_unitrace(configured: str = "") -> str | None:
    """The configured path when it is an executable file, else ``unitrace`` on PATH; None when neither."""
    if configured:
        path = Path(configured)
        return str(path) if path.is_file() and os.access(path, os.X_OK) else None
    return shutil.which("unitrace")


def unitrace_command(unitrace: str, program: list[str], output_dir: Path, metric_group: str) -> list[str]:
    command = [unitrace, "--conditional-collection", "-d", "-v", "--output-dir-path", str(output_dir),
               "-o", str(output_dir / "unitrace.txt")]
    if metric_group:
        command += ["-q", "-g", metric_group]
    return command + program


def run_unitrace(unitrace: str, program: list[str], output_dir: Path, *, metric_group: str, timeout_s: float,
                 cwd: Path) -> UnitraceRun:
    output_dir.mkdir(parents=True, exist_ok=True)
    command = unitrace_command(unitrace, program, output_dir, metric_group)
    try:
        done = subprocess.run(command, cwd=cwd, capture_output=True, text=True, timeout=timeout_s)
    except subprocess.TimeoutExpired as exc:
        raise UnitraceError(f"unitrace ran past {timeout_s:.0f} s") from exc
    files = tuple(sorted(p for p in output_dir.rglob("*") if p.is_file()))
    text = "\n".join([done.stdout, *(p.read_text(errors="replace") for p in files)])
    if done.returncode != 0:
        tail = (done.stderr or done.stdout).strip()[-1500:]
        raise UnitraceError(f"unitrace exited with status {done.returncode}: {tail}")
    return UnitraceRun(text=text[:MAX_TEXT_CHARS], files=files)
