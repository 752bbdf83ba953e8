"""Rerunning a failing candidate under compute-sanitizer memcheck, and trimming its report for the model.

A wrong result, a NaN or a device fault is often an out-of-bounds access. With ``sanitize = true`` in
``[backends.cuda]`` (or ``[backends.triton]``), a candidate that fails verification is run once more in a child
process under ``compute-sanitizer --tool memcheck``; the first distinct errors (what access, which kernel, which
source line, which thread) are added to the verdict's message for the generation agent. A language's package
wraps verification with :func:`memcheck_on_failure` and its own build routes.
"""

from __future__ import annotations

import dataclasses
import os
import re
import subprocess
from pathlib import Path
from typing import Any, Generator

from kforge_core.plugin_api import candidate_class_name
from kforge_core.records import Backend, Candidate, Failure, StageContext, VerifyResult

from .builds import BuildRoutes, cache_root
from .child import child_command
from .options import NvidiaOptions
from .toolchain import find_tool
from .warmup import context_poisoned

# Failures an invalid memory access can explain.
SANITIZED_FAILURES = {Failure.RUNTIME, Failure.MISMATCH, Failure.NAN_INF, Failure.DEVICE_FAULT, Failure.CRASH}
MAX_REPORTED = 3

_PREFIX = re.compile(r"^=+ ?")
# The first line of a memory error (the accesses memcheck exists to find).
_ACCESS_ERROR = re.compile(
    r"^(Invalid __\w+__ \w+ of size|Out-of-range|Misaligned|Invalid (?:global|shared|local)|Illegal|Uninitialized"
    r"|Malloc|Free|Barrier error|Race reported)"
)
# A CUDA API call that failed: after a bad access these are consequences; on their own they are the news.
_API_ERROR = re.compile(r"^(Program hit|Cuda API error)")
_KEEP = re.compile(r"^(at |by thread|Address |Access |and is |is |Device Frame:)")
_SUMMARY = re.compile(r"ERROR SUMMARY: (\d+) errors?")


def _blocks(output: str) -> list[list[str]]:
    blocks: list[list[str]] = []
    for raw in output.splitlines():
        if not raw.startswith("="):
            continue  # the program's own output
        line = _PREFIX.sub("", raw).strip()
        if _ACCESS_ERROR.match(line) or _API_ERROR.match(line):
            blocks.append([line])
        elif blocks and _KEEP.match(line) and len(blocks[-1]) < 6:
            blocks[-1].append(line)
    return blocks


def trim_memcheck(output: str) -> str:
    """The first distinct memcheck errors (kind, kernel and source line, thread, address) and the error count."""
    blocks = _blocks(output)
    summary = _SUMMARY.search(output)
    count = int(summary.group(1)) if summary else len(blocks)
    if count == 0 and not blocks:
        return "compute-sanitizer memcheck found no memory error."
    access = [b for b in blocks if _ACCESS_ERROR.match(b[0])]
    shown_blocks = access or blocks
    distinct: dict[tuple[str, str], list[str]] = {}
    repeats: dict[tuple[str, str], int] = {}
    for block in shown_blocks:
        key = (block[0], next((line for line in block if line.startswith("at ")), ""))
        repeats[key] = repeats.get(key, 0) + 1
        distinct.setdefault(key, block)
    lines = [f"compute-sanitizer memcheck found {count} error{'s' if count != 1 else ''}"
             + (f", {len(access)} of them memory access errors:" if access else ":")]
    for key, block in list(distinct.items())[:MAX_REPORTED]:
        lines.extend(["", *block])
        if repeats[key] > 1:
            lines.append(f"(the same error {repeats[key]} times, in other threads)")
    if len(distinct) > MAX_REPORTED:
        lines.append(f"\n... and {len(distinct) - MAX_REPORTED} more kinds of error")
    if access and len(blocks) > len(access):
        lines.append("\n(the failed CUDA API calls after it are its consequences)")
    return "\n".join(lines)


def run_memcheck(backend: Backend, candidate: Candidate, context: StageContext, options: NvidiaOptions,
                 routes: BuildRoutes) -> str:
    """Run the candidate once under memcheck in a child process; the trimmed report, or why there is none."""
    tool = find_tool("compute-sanitizer", options.compute_sanitizer)
    if tool is None:
        return "compute-sanitizer not found: no memcheck report."
    command = [tool, "--tool", "memcheck", "--show-backtrace", "device", "--print-limit", "20", *child_command(
        workdir=Path(context.workdir), entry=candidate.entry, problem=context.problem.path,
        cache_root=cache_root(context), routes=routes, options=options, mode="sanitize",
        candidate_class=candidate_class_name(context),
    )]
    # Without PyTorch's caching allocator every tensor is its own allocation, so memcheck sees an access past
    # the end of a tensor even where the cache would have put another tensor right behind it.
    env = {**os.environ, "PYTORCH_NO_CUDA_MEMORY_CACHING": "1"}
    try:
        done = subprocess.run(command, capture_output=True, text=True, timeout=options.tool_timeout_s,
                              cwd=context.workdir, env=env)
    except subprocess.TimeoutExpired:
        return f"compute-sanitizer did not finish within {options.tool_timeout_s:.0f} s: no memcheck report."
    return trim_memcheck(done.stdout + "\n" + done.stderr)


def memcheck_on_failure(backend: Backend, candidate: Candidate, context: StageContext,
                        routes: BuildRoutes) -> Generator[None, Any, VerifyResult | None]:
    """The body of a ``kforge_verify`` wrapper (``return (yield from memcheck_on_failure(...))``) around
    whichever implementation verifies (the core's generic one): with ``sanitize`` on, a failing candidate is rerun
    under compute-sanitizer memcheck, built with the language's ``routes``, and the report joins the verdict's
    message."""
    options = context.options if context.options is not None else backend.default_options()
    if not options.sanitize:
        return (yield)
    try:
        result: VerifyResult | None = yield
    except Exception as exc:
        if not context_poisoned():
            raise  # the worker classifies it
        # A fault the candidate's kernels caused surfaced in verification's own code: still the candidate's.
        first_line = (str(exc).strip().splitlines() or [type(exc).__name__])[0]
        result = VerifyResult(correct=False, failure=Failure.DEVICE_FAULT,
                              message=f"the device faulted while the candidate was verified: {first_line}")
    if result is not None and result.failure in SANITIZED_FAILURES:
        report = run_memcheck(backend, candidate, context, options, routes)
        result = dataclasses.replace(result, message=f"{result.message}\n\n{report}".strip(),
                                     notes=(*result.notes, report.splitlines()[0]))
    return result
