"""Whether workers run in the Linux namespace sandbox (``harness.sandbox``), the plan they run under
(:class:`~kforge_core.harness.sandbox_plan.SandboxPlan`), and the command that starts one in it.

``auto`` (the default) uses the sandbox where this machine allows it, and otherwise says once why not and goes on
with the plain isolation (an environment without secrets, resource limits, a session of its own per worker) with
the KForge process made non-dumpable, so that a process of the same user cannot read its environment through
/proc. ``required`` refuses to evaluate without the sandbox; ``off`` never uses it. The sandbox itself is
:mod:`kforge_core.harness.namespace_launcher`; docs/trust.md says what it does and does not protect against.
"""

from __future__ import annotations

import ctypes
import functools
import json
import logging
import os
import subprocess
import sys
import tempfile
from dataclasses import dataclass
from pathlib import Path
from typing import Iterable, Mapping

from ...errors import KForgeError
from ..sandbox_plan import SandboxPlan
from .. import namespace_launcher

log = logging.getLogger(__name__)

SANDBOX_MODES = ("auto", "off", "required")
LAUNCHER = Path(namespace_launcher.__file__).resolve()
# variables that name a build cache a worker writes: the directories they name stay writable in the sandbox
CACHE_VARIABLES = ("TORCH_EXTENSIONS_DIR", "TORCHINDUCTOR_CACHE_DIR", "TRITON_CACHE_DIR", "CUTE_DSL_CACHE_DIR",
                   "NUMBA_CACHE_DIR", "CUDA_CACHE_PATH")
_PR_SET_DUMPABLE = 4


@dataclass(frozen=True)
class SandboxStatus:
    """Whether the namespace sandbox can run here, and why (a sentence)."""

    available: bool
    why: str


def sandboxed_command(plan: SandboxPlan, command: list[str], env: Mapping[str, str], home: Path) -> list[str]:
    """``command`` run in the sandbox ``plan`` describes, with its directory ``home`` and the build caches that
    ``env`` names writable (made if missing)."""
    return launcher_command(launcher_plan(plan, env, home), command)


def launcher_command(launched: dict, command: list[str]) -> list[str]:
    """``command`` run by the launcher under ``launched``, the plan it reads (:func:`launcher_plan`)."""
    return [sys.executable, "-I", "-S", str(LAUNCHER), json.dumps(launched), "--", *command]


def launcher_plan(plan: SandboxPlan, env: Mapping[str, str], home: Path) -> dict:
    """What the launcher (:func:`namespace_launcher.run`) gets for a worker whose directory is ``home``: ``plan``
    with ``home`` and the build caches that ``env`` names writable (made if missing)."""
    caches = [str(home.resolve())]
    for name in CACHE_VARIABLES:
        if env.get(name):
            path = Path(env[name]).resolve()
            if not path.exists():  # a file stays one: the tool that expects a directory says so
                path.mkdir(parents=True, exist_ok=True)  # a process started beside this one may make it first
            caches.append(str(path))
    return {"hide": list(plan.hide), "writable": [*plan.writable, *caches], "readable": list(plan.readable),
            **plan.limits_for_launcher()}


def sandbox_plan(*, scratch_root: Path, cache_dir: Path, runs_dir: Path, sys_path: Iterable[str],
                 environ: Mapping[str, str] | None = None) -> SandboxPlan:
    """The plan for workers whose files live in ``scratch_root``: the runs directory, the home directory and the
    temporary directory hidden; ``scratch_root`` and ``cache_dir`` writable; Python, ``sys_path`` and the packages
    imported so far readable."""
    environ = os.environ if environ is None else environ
    hide = {runs_dir, Path("/tmp"), Path(tempfile.gettempdir())}
    if environ.get("HOME"):
        hide.add(Path(environ["HOME"]))
    writable = [scratch_root, cache_dir]
    for path in writable:
        path.mkdir(parents=True, exist_ok=True)
    readable = {Path(p) for p in (sys.prefix, sys.base_prefix, sys.exec_prefix, *sys_path)}
    readable.update(Path(d) for d in namespace_launcher.link_directories(sys.executable))
    readable.update(_imported_package_roots())
    hide.discard(Path("/"))  # a home directory of / would hide the whole system
    hidden = _resolved(hide)
    # a readable directory that holds a hidden one would bring all of it back (a script run from the home
    # directory puts it on sys.path): only what lies apart from or below the hidden directories stays readable
    readable = {p for p in _resolved(readable) if not any(Path(h).is_relative_to(p) for h in hidden)}
    return SandboxPlan(hide=hidden, writable=_resolved(writable), readable=tuple(sorted(readable)))


def _imported_package_roots() -> set[Path]:
    """The directories of the top-level packages imported so far (an editable install's sources among them)."""
    roots = set()
    for name, module in sys.modules.copy().items():  # one C call: another thread may import meanwhile
        path = getattr(module, "__file__", None)
        if "." not in name and path and Path(path).name == "__init__.py":  # a module file lies in sys.path
            roots.add(Path(path).parent)
    return roots


def _resolved(paths: Iterable[Path]) -> tuple[str, ...]:
    return tuple(sorted({str(Path(p).resolve()) for p in paths if str(p)}))


@functools.cache
def sandbox_status() -> SandboxStatus:
    """Whether the namespace sandbox works on this machine: it is tried once, with a trivial command."""
    if sys.platform != "linux":
        return SandboxStatus(False, f"the worker sandbox needs Linux namespaces; this is {sys.platform}")
    try:
        done = subprocess.run([sys.executable, "-I", "-S", str(LAUNCHER), "--probe"], capture_output=True,
                              text=True, timeout=60, stdin=subprocess.DEVNULL, cwd="/")
    except (OSError, subprocess.TimeoutExpired) as exc:
        return SandboxStatus(False, f"the sandbox's probe could not run: {exc}")
    if done.returncode != 0:
        lines = (done.stderr or "").strip().splitlines()
        why = lines[-1] if lines else f"exit status {done.returncode}"
        if why.startswith("kforge sandbox:"):  # the namespaces were made; what failed came after
            return SandboxStatus(False, f"the sandbox's probe failed inside its namespaces ({why})")
        return SandboxStatus(False, f"this machine does not allow user, PID, mount and network namespaces ({why})")
    return SandboxStatus(True, "user, PID, mount and network namespaces are available")


@functools.cache
def _warn_once(why: str) -> None:
    log.warning("workers run WITHOUT the sandbox: %s. Candidates get an environment without secrets, resource "
                "limits and their own process group only (docs/trust.md); set harness.sandbox = \"off\" to "
                "choose this, or \"required\" to refuse it.", why)


def use_sandbox(mode: str) -> bool:
    """Whether workers start in the sandbox under ``harness.sandbox = mode``; a KForgeError when it is required
    and unavailable. Without it, the KForge process is made non-dumpable (its /proc entries then belong to root)."""
    if mode not in SANDBOX_MODES:
        raise KForgeError(f"harness.sandbox is {mode!r}; use one of {', '.join(SANDBOX_MODES)}")
    if mode == "off":
        _make_non_dumpable()
        return False
    status = sandbox_status()
    if status.available:
        return True
    if mode == "required":
        raise KForgeError(f"harness.sandbox is \"required\" but {status.why}",
                          hint="allow unprivileged user namespaces, or set harness.sandbox = \"auto\"")
    _warn_once(status.why)
    _make_non_dumpable()
    return False


def _make_non_dumpable() -> None:
    """No process of the same user (a candidate's) can read this process's /proc/PID/environ or memory."""
    if sys.platform == "linux":
        ctypes.CDLL(None).prctl(_PR_SET_DUMPABLE, 0, 0, 0, 0)
