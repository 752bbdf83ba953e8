"""Peak memory of one candidate's whole evaluation, process by process (the candidate's worker, the referee, the
baseline worker), against the footprint of one call of the reference: its inputs and its output, from the problem's
description, and on a GPU also as measured (the allocator's peak over one call in this process: inputs, output and
the workspace the call needs, its parameters included).

    python benchmarks/evaluation_memory.py --device cpu --size 8192     # host memory: each process's peak RSS
    python benchmarks/evaluation_memory.py --device cuda --size 32768   # GPU memory, sampled with nvidia-smi
    python benchmarks/evaluation_memory.py --backend cuda --problem-file level3/2_ShallowWideMLP.py --baselines eager

On the CPU a process's peak is its ``VmHWM`` (peak resident memory since it started, torch's own ~0.3-0.6 GiB
included), read when the evaluation is over. On an NVIDIA GPU the device memory of each process (as nvidia-smi
reports it, the allocator's cache included) is sampled every 0.2 s during the evaluation and the largest sum over
the processes at one moment is the evaluation's peak; it is printed with each process's share at that moment and the
phase of the evaluation it fell in (the verdict's ``phases``), and each process's own peak with its phase. The aim it
is held to: at most three times the footprint plus a fixed allowance, each process's own context (the smallest peak
of any of them: a spare's, which never got work, holds its CUDA context and the libraries' handles alone) and the
L2 flush buffer of the two processes that time (the candidate's worker and the baseline worker). The candidate
computes what the reference does, in PyTorch operators (``harness_common``), so what is measured is the harness.
"""

from __future__ import annotations

import os
import subprocess
import sys
import tempfile
import threading
import time
from pathlib import Path

from harness_common import arguments, make_harness
from kforge_core.harness.host.activity import runs_worker
from kforge_core.harness.problem_size import footprint_bytes


def descendants(root: int) -> list[int]:
    """Every process below ``root``, from each one's ``children`` list in ``/proc``."""
    found, waiting = [], [root]
    while waiting:
        pid = waiting.pop()
        try:
            children = [int(c) for c in Path(f"/proc/{pid}/task/{pid}/children").read_text().split()]
        except OSError:
            continue
        found.extend(children)
        waiting.extend(children)
    return found


def peak_rss_mib(pid: int) -> int:
    status = Path(f"/proc/{pid}/status").read_text()
    return int(next(line.split()[1] for line in status.splitlines() if line.startswith("VmHWM"))) // 1024


class GpuSampler(threading.Thread):
    """The largest sum of our processes' device memory seen at one moment (when, and each process's share then),
    and each process's largest (and when)."""

    def __init__(self) -> None:
        super().__init__(daemon=True)
        self.stop = threading.Event()
        self.started = time.perf_counter()
        self.peak_total = 0
        self.peak_at = 0.0  # seconds after the sampler started
        self.peak_shares: dict[int, int] = {}  # pid -> MiB at the moment of the peak
        self.peak_by_pid: dict[int, int] = {}
        self.peak_by_pid_at: dict[int, float] = {}

    def run(self) -> None:
        ours = set()
        while not self.stop.is_set():
            ours.update(descendants(os.getpid()))
            listing = subprocess.run(["nvidia-smi", "--query-compute-apps=pid,used_memory",
                                      "--format=csv,noheader,nounits"], capture_output=True, text=True).stdout
            now = time.perf_counter() - self.started
            shares = {}
            for line in listing.splitlines():
                pid, used = (int(x) for x in line.split(","))
                if pid in ours:
                    shares[pid] = used
                    if used > self.peak_by_pid.get(pid, 0):
                        self.peak_by_pid[pid], self.peak_by_pid_at[pid] = used, now
            if sum(shares.values()) > self.peak_total:
                self.peak_total, self.peak_at, self.peak_shares = sum(shares.values()), now, shares
            time.sleep(0.2)


def main() -> None:
    parser = arguments(__doc__.split("\n\n")[0])
    parser.add_argument("--baselines", default="eager,compile", help="the baselines timed, comma-separated")
    args = parser.parse_args()
    with tempfile.TemporaryDirectory(prefix="kforge-memory-") as root:
        harness, candidate = make_harness(args, Path(root), baselines=tuple(args.baselines.split(",")))
        with harness:
            footprint = _footprint(harness)
            measured = _measured_footprint(harness) if harness.backend.device == "cuda" else 0.0
            sampler = GpuSampler() if harness.backend.device == "cuda" else None
            if sampler:
                sampler.start()
            start = time.perf_counter()
            verdict = harness.evaluate(candidate)
            seconds = time.perf_counter() - start
            if sampler:
                sampler.stop.set()
                sampler.join()
            workers = [pid for pid in descendants(os.getpid()) if runs_worker(pid)]
            roles = _roles(harness, workers)
            print(f"{candidate.label}: {'correct' if verdict.correct else verdict.failure.value} in {seconds:.1f} s; "
                  f"one reference call's footprint {footprint:.0f} MiB (inputs, outputs and parameters)"
                  + (f", {measured:.0f} MiB measured (with its workspace)" if measured else ""))
            if sampler:
                when = _phase_at(verdict.phases, sampler.peak_at - (start - sampler.started))
                print(f"GPU peak, all processes at one moment: {sampler.peak_total} MiB = "
                      f"{sampler.peak_total / footprint:.1f}x the footprint"
                      + (f" ({sampler.peak_total / measured:.1f}x the measured one)" if measured else "") + f", {when}")
                for pid, used in sorted(sampler.peak_shares.items()):
                    print(f"  then pid {pid} ({roles.get(pid, 'a process below a worker')}): {used} MiB")
                _against_the_aim(sampler, footprint, verdict)
                for pid, used in sorted(sampler.peak_by_pid.items()):
                    at = _phase_at(verdict.phases, sampler.peak_by_pid_at[pid] - (start - sampler.started))
                    print(f"  pid {pid} ({roles.get(pid, 'a process below a worker')}): {used} MiB at most, {at}")
            else:
                peaks = {pid: peak_rss_mib(pid) for pid in workers}
                total = sum(peaks.values())
                print(f"peak resident memory of the {len(peaks)} worker processes: {total} MiB in all "
                      f"(each one's peak, summed) = {total / footprint:.1f}x the footprint")
                for pid, peak in sorted(peaks.items()):
                    print(f"  pid {pid} ({roles[pid]}): {peak} MiB")


def _against_the_aim(sampler: GpuSampler, footprint: float, verdict) -> None:
    """The peak against three times the footprint and the fixed allowance (each process's context: the smallest
    peak of any, a spare's; the two timing processes' L2 flush buffers)."""
    flush = (verdict.method.l2_flush_bytes / (1 << 20)) if verdict.method else 0.0
    processes = len(sampler.peak_shares)
    context = min(sampler.peak_by_pid.values())
    allowance = processes * context + 2 * flush
    aim = 3 * footprint + allowance
    print(f"aim: 3x the footprint + {allowance:.0f} MiB ({processes} processes' contexts of {context} MiB, "
          f"two L2 flush buffers of {flush:.0f} MiB) = {aim:.0f} MiB; the peak is "
          f"{(sampler.peak_total - allowance) / footprint:.1f}x the footprint past the allowance: "
          + ("met" if sampler.peak_total <= aim else "not met"))


def _phase_at(phases: tuple[tuple[str, float], ...], seconds: float) -> str:
    """Where ``seconds`` after the evaluation began fell among its ``phases`` (the verdict's, in order)."""
    if seconds < 0:
        return f"{-seconds:.1f} s before the evaluation began"
    begun = 0.0
    for name, spent in phases:
        if seconds < begun + spent:
            return f"{seconds:.1f} s in ({name}, {seconds - begun:.1f} s into it)"
        begun += spent
    return f"{seconds:.1f} s in (after its phases)"


def _roles(harness, workers: list[int]) -> dict[int, str]:
    """What each worker process is, from the directory it works in: the referee's, the baseline worker's (named
    ``baselines-N``), or another (the candidate's worker, or a spare that never got a candidate)."""
    referee = harness._referee._worker  # a benchmark may look inside; the harness names no roles to the outside
    roles = {}
    for pid in workers:
        try:
            home = Path(os.readlink(f"/proc/{pid}/cwd"))
        except OSError:
            roles[pid] = "ended"
            continue
        if referee is not None and home == referee.home:
            roles[pid] = "the referee"
        elif home.name.startswith("baselines-"):
            roles[pid] = "the baseline worker"
        else:
            roles[pid] = f"a worker ({home.name}): the candidate's, or a spare"
    return roles


def _footprint(harness) -> float:
    """One call's inputs and outputs and the model's parameters and buffers, in MiB, from the problem's
    description (as ``kforge check`` lists them)."""
    return footprint_bytes(harness.problem) / (1 << 20)


def _measured_footprint(harness) -> float:
    """The allocator's peak over one reference call made here, in MiB (from nothing allocated: the model, its
    inputs, the call's workspace and its output); all of it is handed back before the evaluation starts."""
    import importlib.util

    import torch

    spec = importlib.util.spec_from_file_location("memory_problem", harness.problem.path)
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    torch.manual_seed(0)
    device = torch.device("cuda")
    torch.cuda.reset_peak_memory_stats(device)
    model = module.Model(*module.get_init_inputs()).to(device)
    inputs = [x.to(device) if isinstance(x, torch.Tensor) else x for x in module.get_inputs()]
    with torch.no_grad():
        output = model(*inputs)
    torch.cuda.synchronize(device)
    peak = torch.cuda.max_memory_allocated(device)
    del model, inputs, output
    torch.cuda.empty_cache()
    return peak / (1 << 20)


if __name__ == "__main__":
    sys.exit(main())
