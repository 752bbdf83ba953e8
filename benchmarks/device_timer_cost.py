"""What each timer costs per timed run, on a call that does almost nothing (so the timer's own cost shows).

    python benchmarks/device_timer_cost.py --device cuda     # the GPU machine: wall, events, device (CUPTI)
    python benchmarks/device_timer_cost.py --device cpu      # here: wall, and the profiler's host-side cost

For each timer: the median time of one timed run (the call, the synchronize, the timer's own work) over --runs runs,
and for the device timer the cost of the profiler session around the series (start, stop, reading its records),
for the process's first session and a later one.
On the CPU there is no device timer; the profiler is timed with its CPU activity alone and one record_function
per run, the host-side part of what the ``device`` timer adds on a GPU (there CUPTI's callbacks come on top).
The device timer's runs are taken apart from the wall and events runs, so its cost never enters their figures.
"""

from __future__ import annotations

import argparse
import statistics
import time


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--device", default="cpu", choices=("cpu", "cuda"))
    parser.add_argument("--runs", type=int, default=200)
    parser.add_argument("--size", type=int, default=1024, help="elements of the tensor the call adds 1 to")
    args = parser.parse_args()

    import torch

    if args.device == "cuda" and not torch.cuda.is_available():
        raise SystemExit("device_timer_cost.py --device cuda needs an NVIDIA GPU")
    x = torch.zeros(args.size, device=args.device)
    sync = torch.cuda.synchronize if args.device == "cuda" else (lambda: None)

    def call() -> None:
        x.add_(1)

    def timed(body) -> float:
        samples = []
        for _ in range(args.runs):
            start = time.perf_counter()
            body()
            samples.append((time.perf_counter() - start) * 1e6)
        return statistics.median(samples)

    def bare() -> None:
        call()
        sync()

    print(f"device {args.device}, {args.runs} runs of x.add_(1) on {args.size} floats; median per run:")
    print(f"  the call and the synchronize alone:       {timed(bare):8.1f} us")
    if args.device == "cuda":
        def with_events() -> None:
            start, end = torch.cuda.Event(enable_timing=True), torch.cuda.Event(enable_timing=True)
            start.record()
            call()
            end.record()
            sync()
            end.elapsed_time(start)

        print(f"  with a pair of CUDA events:               {timed(with_events):8.1f} us")
    for session in ("first session (the profiler starts up)", "a later session"):
        _profiler_cost(args, call, sync, session)


def _profiler_cost(args: argparse.Namespace, call, sync, session_name: str) -> None:
    import torch

    if args.device == "cuda":
        from kforge_nvidia.device_time import CuptiClock

        clock, what = CuptiClock(), "the device timer (CUPTI through torch.profiler)"
    else:
        clock, what = _CpuProfilerClock(), "torch.profiler, CPU activity only (host side of the device timer)"
    session = time.perf_counter()
    samples = []
    with clock:
        for index in range(args.runs):
            start = time.perf_counter()
            with clock.run(index):
                call()
                sync()
            samples.append((time.perf_counter() - start) * 1e6)
    stopped = time.perf_counter()
    busy = clock.busy_ms()
    read = time.perf_counter()
    print(f"  under {what}, {session_name}: {statistics.median(samples):8.1f} us per run; "
          f"{(stopped - session) * 1e3 - sum(samples) / 1e3:.1f} ms to start and stop the session, "
          f"{(read - stopped) * 1e3:.1f} ms to read {len(busy)} runs' records")


class _CpuProfilerClock:
    """The same profiler session and per-run ranges as the CUDA device timer, with the CPU activity only."""

    def __enter__(self):
        import torch

        from kforge_nvidia.device_time import _records

        self._read = _records
        self._profiler = torch.profiler.profile(activities=[torch.profiler.ProfilerActivity.CPU])
        self._profiler.__enter__()
        return self

    def __exit__(self, *exc_info):
        self._profiler.__exit__(*exc_info)

    def run(self, index):
        import torch

        return torch.profiler.record_function(f"kforge.timed_run.{index}")

    def busy_ms(self):
        return [r for r in self._read(self._profiler) if r.name.startswith("kforge.timed_run.")]


if __name__ == "__main__":
    main()
