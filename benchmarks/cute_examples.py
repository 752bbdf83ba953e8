"""The cute single-shot example on this GPU, through KForge's harness: its compile stage the first time (the DSL's
import and the compile), the same source again in the warm worker (the process's compile cache) and in a new
worker (the disk cache), and its runtime against PyTorch eager and torch.compile.

    python benchmarks/cute_examples.py [--rounds 3] [--json FILE]

Each round starts from an empty cache directory. Runtimes are the harness's medians (L2 flushed before every run,
fresh inputs each run); the speedups are the medians over rounds.
"""

from __future__ import annotations

import argparse
import json
import statistics
import tempfile
from pathlib import Path

from kforge_core.harness import Harness
from kforge_core.plugins import PluginSelection
from kforge_core.problem import load_problem
from kforge_core.records import Candidate
from kforge_core.settings import HarnessSettings, Settings

ROOT = Path(__file__).resolve().parents[1]
EXAMPLES = ROOT / "plugins/kforge_cute/kforge_cute/examples"
PLUGINS = PluginSelection(only=("cute",))


def _compile(verdict) -> dict:
    return {"seconds": verdict.compile.seconds, "cached": verdict.compile.cached, "log": verdict.compile.log}


def one_round(cache: Path, with_compile: bool) -> dict:
    from kforge_cute import CUTE

    source = (EXAMPLES / "cute_solution.py").read_text()
    baselines = ("eager", "compile") if with_compile else ("eager",)
    settings = Settings(cache_dir=cache, harness=HarnessSettings(baselines=baselines))
    problem = load_problem(EXAMPLES / "cute_problem.py")
    with Harness(backend=CUTE, problem=problem, settings=settings, plugins=PLUGINS) as harness:
        first = harness.evaluate(Candidate.from_source(source, label="first"))
        again = harness.evaluate(Candidate.from_source(source, label="again"))
    with Harness(backend=CUTE, problem=problem, settings=settings, plugins=PLUGINS) as harness:
        fresh = harness.evaluate(Candidate.from_source(source, label="new worker"), measure=False)
    wrong = [v for v in (first, again, fresh) if not v.correct]
    if wrong:
        raise SystemExit(f"{wrong[0].candidate}: {wrong[0].failure}: {wrong[0].message}")
    return {
        "compile_first": _compile(first), "compile_again": _compile(again), "compile_new_worker": _compile(fresh),
        "runtime_ms": {"cute": first.runtime.median, "cute_again": again.runtime.median,
                       **{name: stats.median for name, stats in first.baselines}},
        "speedups": dict(first.speedups), "baseline_errors": dict(first.baseline_errors),
    }


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--rounds", type=int, default=3)
    parser.add_argument("--no-compile-baseline", action="store_true")
    parser.add_argument("--json", type=Path)
    args = parser.parse_args()
    import torch

    rounds = []
    for i in range(args.rounds):
        with tempfile.TemporaryDirectory() as cache:
            rounds.append(one_round(Path(cache), not args.no_compile_baseline))
        r = rounds[-1]
        print(f"round {i + 1}: compile {r['compile_first']['seconds']:.2f} s, again {r['compile_again']['seconds']:.3f}"
              f" s, new worker {r['compile_new_worker']['seconds']:.2f} s; runtime " +
              ", ".join(f"{k} {v:.4f} ms" for k, v in r["runtime_ms"].items()), flush=True)
    med = lambda values: statistics.median(values)  # noqa: E731
    print(f"\n{torch.cuda.get_device_name(0)}, medians of {len(rounds)} rounds (add + LayerNorm, 8192 x 4096 fp32):")
    for stage in ("compile_first", "compile_again", "compile_new_worker"):
        print(f"  {stage:20s} {med([r[stage]['seconds'] for r in rounds]):8.3f} s  "
              f"(cached: {[r[stage]['cached'] for r in rounds]})")
    for name in rounds[0]["runtime_ms"]:
        print(f"  runtime {name:12s} {med([r['runtime_ms'][name] for r in rounds]):8.4f} ms")
    for name in rounds[0]["speedups"]:
        print(f"  speedup vs {name:9s} {med([r['speedups'][name] for r in rounds]):8.2f}x")
    print("first compile log:\n  " + rounds[0]["compile_first"]["log"].replace("\n", "\n  "))
    print("new worker's log:\n  " + rounds[0]["compile_new_worker"]["log"].replace("\n", "\n  "))
    if args.json:
        args.json.write_text(json.dumps({"device": torch.cuda.get_device_name(0), "rounds": rounds}, indent=1))


if __name__ == "__main__":
    main()
