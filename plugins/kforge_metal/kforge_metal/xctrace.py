"""Running Instruments from the command line: ``xcrun xctrace record`` a Metal System Trace of a program, then
``xcrun xctrace export`` its table of contents and the tables the summary reads. macOS with Xcode only.

Each failure of the tool raises :class:`XctraceError` with the tool's own output attached, so the profile can
say why it has no trace.
"""

from __future__ import annotations

import shutil
import subprocess
from pathlib import Path

from .metal_trace import TraceSummary, summarize_trace
from .xctrace_xml import ExportError, parse_table, parse_toc

TEMPLATE = "Metal System Trace"
GPU_INTERVALS = "metal-gpu-intervals"
SIGNPOST_INTERVALS = "os-signpost-interval"


class XctraceError(RuntimeError):
    pass


def find_xctrace() -> str | None:
    """``xcrun`` when it finds ``xctrace`` (Xcode installed, not only the command line tools), else None."""
    xcrun = shutil.which("xcrun")
    if xcrun is None:
        return None
    try:
        found = subprocess.run([xcrun, "--find", "xctrace"], capture_output=True, text=True, timeout=30)
    except (OSError, subprocess.SubprocessError):
        return None
    return xcrun if found.returncode == 0 and found.stdout.strip() else None


def record_command(xcrun: str, output: Path, program: list[str], time_limit_s: float) -> list[str]:
    """The command that records ``program`` with the Metal System Trace template plus os_signpost (for the
    signposts of PyTorch's MPS profiler)."""
    return [xcrun, "xctrace", "record", "--template", TEMPLATE, "--instrument", "os_signpost",
            "--time-limit", f"{max(1, int(time_limit_s))}s", "--output", str(output), "--no-prompt",
            "--launch", "--", *program]


def table_xpath(schema: str) -> str:
    return f'/trace-toc/run[@number="1"]/data/table[@schema="{schema}"]'


def _run(command: list[str], timeout_s: float, what: str) -> str:
    try:
        done = subprocess.run(command, capture_output=True, text=True, timeout=timeout_s)
    except subprocess.TimeoutExpired:
        raise XctraceError(f"{what} did not finish in {timeout_s:.0f} s") from None
    except OSError as exc:
        raise XctraceError(f"{what} could not start: {exc}") from None
    if done.returncode != 0:
        tail = "\n".join((done.stdout + done.stderr).strip().splitlines()[-15:])
        raise XctraceError(f"{what} failed (exit status {done.returncode}):\n{tail}")
    return done.stdout


def record_and_summarize(xcrun: str, program: list[str], workdir: Path, timeout_s: float) -> TraceSummary:
    """Record ``program`` into ``workdir/metal.trace``, export its tables next to it and summarise them."""
    trace = workdir / "metal.trace"
    shutil.rmtree(trace, ignore_errors=True)
    _run(record_command(xcrun, trace, program, timeout_s), timeout_s + 60, "xctrace record")
    toc_text = _run([xcrun, "xctrace", "export", "--input", str(trace), "--toc"], timeout_s, "xctrace export --toc")
    (workdir / "xctrace_toc.xml").write_text(toc_text)
    try:
        toc = parse_toc(toc_text)
        if toc.launched_pid is None:
            raise XctraceError("the trace does not say which process it launched")
        tables = {}
        for schema in (GPU_INTERVALS, SIGNPOST_INTERVALS):
            if schema not in toc.schemas:
                continue
            document = _run([xcrun, "xctrace", "export", "--input", str(trace), "--xpath", table_xpath(schema)],
                            timeout_s, f"xctrace export of {schema}")
            (workdir / f"xctrace_{schema}.xml").write_text(document)
            tables[schema] = parse_table(document)
        if GPU_INTERVALS not in tables:
            raise XctraceError(f"the trace has no {GPU_INTERVALS} table (tables: {', '.join(toc.schemas)})")
        return summarize_trace(tables[GPU_INTERVALS], toc.launched_pid, tables.get(SIGNPOST_INTERVALS))
    except (ExportError, ValueError) as exc:
        raise XctraceError(f"the exported trace could not be read: {exc}") from None
