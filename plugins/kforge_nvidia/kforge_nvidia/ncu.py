"""Running Nsight Compute on a candidate's forward, with a curated metric set.

ncu runs the child program (``kforge_nvidia.child``) with ``--profile-from-start off``, so it profiles only the
kernels launched in the candidate's forward, and ``--clock-control none``, so the GPU runs at the clocks it would
run at anyway. The report is exported, then read back as CSV (raw page, base units) for :mod:`ncu_csv`.
"""

from __future__ import annotations

import re
import subprocess
import time
from dataclasses import dataclass
from pathlib import Path

STALL_REASONS = (
    "long_scoreboard", "short_scoreboard", "barrier", "membar", "mio_throttle", "lg_throttle", "math_pipe_throttle",
    "wait", "not_selected", "selected", "no_instruction", "branch_resolving", "dispatch_stall", "drain", "imc_miss",
    "tex_throttle", "sleeping",
)
FLOP_COUNTERS = tuple(
    f"smsp__sass_thread_inst_executed_op_{op}_pred_on.sum"
    for op in ("ffma", "fadd", "fmul", "hfma", "hadd", "hmul", "dfma", "dadd", "dmul")
)
METRICS = (
    # time and speed of light
    "gpu__time_duration.sum",
    "sm__throughput.avg.pct_of_peak_sustained_elapsed",
    "gpu__compute_memory_throughput.avg.pct_of_peak_sustained_elapsed",
    # memory hierarchy
    "dram__throughput.avg.pct_of_peak_sustained_elapsed",
    "lts__throughput.avg.pct_of_peak_sustained_elapsed",
    "l1tex__throughput.avg.pct_of_peak_sustained_active",
    "dram__bytes_read.sum",
    "dram__bytes_write.sum",
    "lts__t_sector_hit_rate.pct",
    # occupancy and launch
    "sm__warps_active.avg.pct_of_peak_sustained_active",
    "sm__maximum_warps_per_active_cycle_pct",
    "launch__registers_per_thread",
    "launch__shared_mem_per_block_static",
    "launch__shared_mem_per_block_dynamic",
    "launch__block_size",
    "launch__grid_size",
    "launch__waves_per_multiprocessor",
    "launch__occupancy_limit_registers",
    "launch__occupancy_limit_shared_mem",
    "launch__occupancy_limit_warps",
    "launch__occupancy_limit_blocks",
    # warp stalls: share of active warps stalled for each reason
    *(f"smsp__warp_issue_stalled_{reason}_per_warp_active.pct" for reason in STALL_REASONS),
    # tensor cores
    "sm__pipe_tensor_cycles_active.avg.pct_of_peak_sustained_active",
    # work done, and the ceilings it is measured against (ncu's own roofline inputs)
    *FLOP_COUNTERS,
    "sm__sass_thread_inst_executed_op_ffma_pred_on.sum.peak_sustained",
    "sm__sass_thread_inst_executed_op_dfma_pred_on.sum.peak_sustained",
    "sm__cycles_elapsed.avg.per_second",
    "dram__bytes.sum.peak_sustained",
    "dram__cycles_elapsed.avg.per_second",
    # the device
    "device__attribute_display_name",
    "device__attribute_compute_capability_major",
    "device__attribute_compute_capability_minor",
    "device__attribute_multiprocessor_count",
)
MAX_KERNELS = 64
# Another process had the GPU's performance counters (a profile from another build cache, DCGM): the driver says so
# and ncu gives up at once. It is tried again after these waits (seconds), while the timeout allows.
BUSY_WAITS_S = (1.0, 2.0, 4.0, 8.0)
_COUNTERS_BUSY = re.compile(r"driver resource was unavailable|concurrently collecting profiling data", re.I)
_UNKNOWN_METRIC = re.compile(r"(?:Failed to find metric|metric(?:s)? not found|Invalid metric)[^\w]*([\w.]+__[\w.]+)", re.I)


class NcuError(RuntimeError):
    """ncu could not profile the candidate; the message says why (permissions, a crash, a timeout)."""


@dataclass(frozen=True)
class NcuRun:
    csv: str
    report: Path
    dropped_metrics: tuple[str, ...]


def ncu_command(ncu: str, report: Path, metrics: tuple[str, ...], program: list[str]) -> list[str]:
    return [
        ncu, "--metrics", ",".join(metrics), "--clock-control", "none", "--profile-from-start", "off",
        "--target-processes", "all", "--launch-count", str(MAX_KERNELS), "--force-overwrite",
        "--export", str(report), *program,
    ]


def run_ncu(ncu: str, program: list[str], scratch: Path, timeout_s: float, cwd: Path) -> NcuRun:
    """Profile ``program``; a metric this ncu or GPU does not know is dropped and the run repeated once, and a run
    refused because another process had the GPU's counters is repeated after a wait (``BUSY_WAITS_S``)."""
    scratch.mkdir(parents=True, exist_ok=True)
    report = scratch / "profile.ncu-rep"
    metrics = METRICS
    dropped: list[str] = []
    deadline = time.monotonic() + timeout_s
    waits = list(BUSY_WAITS_S)
    while True:
        done = _run([*ncu_command(ncu, report, metrics, program)], max(1.0, deadline - time.monotonic()), cwd)
        output = done.stdout + done.stderr
        unknown = [m for m in _UNKNOWN_METRIC.findall(output) if m in metrics]
        if unknown and not dropped:
            dropped.extend(unknown)
            metrics = tuple(m for m in metrics if m not in unknown)
            continue
        if done.returncode != 0 and _COUNTERS_BUSY.search(output) and waits \
                and time.monotonic() + waits[0] < deadline:
            time.sleep(waits.pop(0))
            continue
        if done.returncode != 0 or not report.is_file():
            raise NcuError(_tail(output, "ncu failed"))
        break
    exported = _run([ncu, "--import", str(report), "--csv", "--page", "raw", "--print-units", "base",
                     "--print-kernel-base", "function"], timeout_s, cwd)
    if exported.returncode != 0:
        raise NcuError(_tail(exported.stdout + exported.stderr, "ncu --import failed"))
    return NcuRun(exported.stdout, report, tuple(dropped))


def _run(command: list[str], timeout_s: float, cwd: Path) -> subprocess.CompletedProcess[str]:
    try:
        return subprocess.run(command, capture_output=True, text=True, timeout=timeout_s, cwd=cwd)
    except subprocess.TimeoutExpired:
        raise NcuError(f"ncu did not finish within {timeout_s:.0f} s") from None


def _tail(output: str, what: str) -> str:
    lines = [line for line in output.splitlines() if line.strip()]
    errors = [line for line in lines if "ERR" in line or "rror" in line]
    return f"{what}: " + "\n".join((errors or lines)[-8:])
