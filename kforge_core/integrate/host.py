"""``kforge integrate`` seen from KForge's process: gather the kernels, start the worker process that runs the
model (without secrets in its environment, in its own session, killed at the deadline), read its report."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path
from typing import Any, Callable

from ..errors import KForgeError
from ..export import accepted_kernels, prepare, write_package
from ..harness.host.sandbox import worker_environment
from .request import KernelPackage


def kernel_packages(sources: list[str], runs_dir: Path, home: Path,
                    device_of: Callable[[str], str]) -> tuple[KernelPackage, ...]:
    """Each source is an exported package's directory, or a run or bench (id or directory) whose accepted kernels
    are swapped in as they are (a Numba kernel, which no package may carry, included)."""
    packages = []
    for number, source in enumerate(sources):
        path = Path(source)
        if (path / "build").is_dir():
            packages.append(KernelPackage(str(path.resolve()), through_kernels=True))
            continue
        kernels, _ = prepare(accepted_kernels(runs_dir, source), device_of, allow_any_dependency=True)
        out = home / f"from_runs_{number}"
        devices = {device_of(k.accepted.backend) for k in kernels}
        result = write_package(out, f"kforge_runs_{number}", kernels, [], variant=f"torch-{'-'.join(sorted(devices))}")
        packages.append(KernelPackage(str(out), through_kernels=False,
                                      module_dir=str(out / "build" / result.variant / result.package)))
    return tuple(packages)


def run_worker(request: Any, home: Path, timeout_s: float, worker: str = "kforge_core.integrate.worker",
               what: str = "integrate") -> dict[str, Any]:
    """Run ``python -m worker REQUEST.json REPORT.json`` for ``request`` (an integrate request, or another
    command's that runs a model the same way: ``what`` names it in errors); its report."""
    home.mkdir(parents=True, exist_ok=True)
    request_path, report_path = home / "request.json", home / "report.json"
    request_path.write_text(json.dumps(request.to_json(), indent=2))
    report_path.unlink(missing_ok=True)
    env = worker_environment(os.environ, home / "cache")
    env["PYTHONPATH"] = os.pathsep.join(filter(None, [request.workdir, env.get("PYTHONPATH", "")]))
    with open(home / "worker.err", "wb") as err:
        process = subprocess.Popen([sys.executable, "-m", worker, str(request_path),
                                    str(report_path)], cwd=request.workdir or None, env=env,
                                   stdin=subprocess.DEVNULL, stdout=err, stderr=err, start_new_session=True)
        try:
            process.wait(timeout=timeout_s)
        except subprocess.TimeoutExpired:
            raise KForgeError(f"the {what} worker ran past {timeout_s:.0f} s and was stopped",
                              hint=f"its output is in {home / 'worker.err'}") from None
        finally:
            if process.poll() is None:  # the deadline, or KForge itself interrupted: the worker does not outlive it
                process.kill()
                process.wait()
    if not report_path.is_file():
        tail = (home / "worker.err").read_text(errors="replace")[-2000:]
        raise KForgeError(f"the {what} worker died (exit status {process.returncode}) before reporting:\n{tail}")
    outcome = json.loads(report_path.read_text())
    if not outcome["ok"]:
        raise KForgeError(f"{what} failed in its worker: {outcome['error']}",
                          hint=f"the traceback is in {report_path}")
    return outcome["report"]
