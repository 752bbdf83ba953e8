"""From a model to the kernels that matter, on a GPU: ``kforge hotspots`` on a Llama-style model and a
mixture-of-experts one, both from public transformers configs (layers cut to fit, random weights, bfloat16), then
the projected and the measured gains of swapping in the shipped Triton kernels and of ``torch.compile``.

    python benchmarks/model_hotspots.py [--models llama,qwen3moe] [--backend triton] [--prompt-tokens 512]
        [--decode-tokens 32] [--batch 1] [--out DIR] [--stages hotspots,integrate,compile]

For each model it prints the ranked table for prefill and decode, what the extracted problems cover (the issue asks
for at least 90% of each phase's device time), and the profiler's device total beside the measured step time.
``integrate``: a bench of ``examples/suites/llm``'s Triton solutions (RMSNorm, SwiGLU MLP), swapped into the Llama
by ``kforge integrate --hotspots``, which prints the projected gain (Amdahl, from each kernel's speedup at each
phase's shape) beside the measured one. ``compile``: each extracted problem's ``torch.compile`` speedup at its
served shape, projected the same way, beside the whole model compiled (the stronger baseline a user compares with).
Needs transformers and a CUDA GPU.
"""

from __future__ import annotations

import argparse
import json
import os
import subprocess
import sys
import tempfile
import time
from pathlib import Path

from kforge_core.hotspots.report import table_lines

REPO = Path(__file__).resolve().parents[1]

# meta-llama/Meta-Llama-3-8B's config.json (the architecture; the weights are random), layers cut to 8
LLAMA3_8B = {
    "architectures": ["LlamaForCausalLM"], "model_type": "llama", "hidden_size": 4096, "intermediate_size": 14336,
    "num_attention_heads": 32, "num_key_value_heads": 8, "num_hidden_layers": 8, "hidden_act": "silu",
    "max_position_embeddings": 8192, "rms_norm_eps": 1e-05, "rope_theta": 500000.0, "vocab_size": 128256,
    "tie_word_embeddings": False, "attention_bias": False, "bos_token_id": 128000, "eos_token_id": 128001,
    "torch_dtype": "bfloat16",
}
# Qwen/Qwen3-30B-A3B's config.json (128 experts, 8 a token), layers cut to 4
QWEN3_MOE = {
    "architectures": ["Qwen3MoeForCausalLM"], "model_type": "qwen3_moe", "hidden_size": 2048,
    "intermediate_size": 6144, "moe_intermediate_size": 768, "num_experts": 128, "num_experts_per_tok": 8,
    "norm_topk_prob": True, "decoder_sparse_step": 1, "mlp_only_layers": [], "num_attention_heads": 32,
    "num_key_value_heads": 4, "head_dim": 128, "num_hidden_layers": 4, "hidden_act": "silu",
    "max_position_embeddings": 40960, "rms_norm_eps": 1e-06, "rope_theta": 1000000.0, "vocab_size": 151936,
    "tie_word_embeddings": False, "attention_bias": False, "bos_token_id": 151643, "eos_token_id": 151645,
    "torch_dtype": "bfloat16", "output_router_logits": False,
}
# openai/gpt-oss-20b's config.json without its MXFP4 quantization (32 experts, 4 a token), layers cut to 4
GPT_OSS = {
    "architectures": ["GptOssForCausalLM"], "model_type": "gpt_oss", "hidden_size": 2880, "intermediate_size": 2880,
    "num_local_experts": 32, "num_experts_per_tok": 4, "experts_per_token": 4, "num_attention_heads": 64,
    "num_key_value_heads": 8, "head_dim": 64, "num_hidden_layers": 4, "hidden_act": "silu",
    "layer_types": ["sliding_attention", "full_attention"] * 2, "sliding_window": 128,
    "max_position_embeddings": 131072, "rms_norm_eps": 1e-05, "rope_theta": 150000,
    "rope_scaling": {"beta_fast": 32.0, "beta_slow": 1.0, "factor": 32.0, "original_max_position_embeddings": 4096,
                     "rope_type": "yarn", "truncate": False},
    "vocab_size": 201088, "tie_word_embeddings": False, "attention_bias": True, "swiglu_limit": 7.0,
    "torch_dtype": "bfloat16", "output_router_logits": False,
}
MODELS = {"llama": LLAMA3_8B, "qwen3moe": QWEN3_MOE, "gptoss": GPT_OSS}
COVERAGE_WANTED = 0.90


def kforge(*args: str) -> subprocess.CompletedProcess:
    return subprocess.run([sys.executable, "-m", "kforge_core", *args], capture_output=True, text=True, cwd=REPO)


def hotspots(name: str, folder: Path, args: argparse.Namespace) -> dict | None:
    config_dir = folder / f"{name}-config"
    config_dir.mkdir(parents=True, exist_ok=True)
    (config_dir / "config.json").write_text(json.dumps(MODELS[name], indent=2))
    extract = folder / f"{name}-problems"
    started = time.perf_counter()
    done = kforge("hotspots", str(config_dir), "--backend", args.backend, "--dtype", "bfloat16", "--batch",
                  str(args.batch), "--prompt-tokens", str(args.prompt_tokens), "--decode-tokens",
                  str(args.decode_tokens), "--extract", str(extract), "--json")
    if done.returncode != 0:
        print(f"[{name}] kforge hotspots failed:\n{done.stdout[-3000:]}{done.stderr[-3000:]}")
        return None
    report = json.loads(done.stdout)
    (folder / f"{name}-hotspots.json").write_text(json.dumps(report, indent=2))
    print(f"\n=== {name}: kforge hotspots took {time.perf_counter() - started:.0f} s")
    report["extracted"] = True
    print("\n".join(table_lines(report, top=12)))
    for phase, figures in report["phases"].items():
        covered = sum(r["share"] for r in report["rows"] if r["phase"] == phase and r.get("problem"))
        ratio = figures["profiler_vs_measured"]
        print(f"[{name}] {phase}: extracted problems cover {covered:.1%} of device time "
              f"({'ok' if covered >= COVERAGE_WANTED else 'UNDER'} {COVERAGE_WANTED:.0%}); the profiled step "
              f"{figures['profiled_step_ms']:.4g} ms vs measured {figures['measured_step_ms']:.4g} ms "
              f"({ratio:.1%}; {'within' if abs(ratio - 1) <= 0.10 else 'NOT within'} 10%); less the profiler's own "
              f"cost ({figures['profiler_us_per_operation']:.2g} us for each of {figures['operations_per_step']:.0f} "
              f"operations) {figures['profiled_less_own_cost_ms']:.4g} ms "
              f"({figures['profiled_less_own_cost_ms'] / figures['measured_step_ms']:.1%}); kernels "
              f"{figures['profiled_device_ms']:.4g} ms, the device busy {figures['device_busy']:.0%} of the measured "
              "step")
    for row in report["rows"]:
        if row["kind"] != "aten" and not row.get("problem"):
            print(f"[{name}] not extracted: {row['phase']} {row['group']}: {row.get('why_not')}")
    return report


def integrate(name: str, folder: Path, args: argparse.Namespace) -> None:
    """The llm suite's Triton solutions, accepted by a bench, swapped into the model with the projection."""
    runs = folder / "runs"
    done = kforge("bench", str(REPO / "examples/suites/llm/problems"), "--solutions",
                  str(REPO / "examples/suites/llm/solutions/triton"), "--backend", args.backend, "--policy", "report",
                  "--precision", "bf16", "--runs-dir", str(runs), "--json")
    if done.returncode != 0:
        print(f"[{name}] the bench of the shipped Triton kernels failed:\n{done.stdout[-2000:]}{done.stderr[-2000:]}")
        return
    bench = json.loads(done.stdout)
    for problem in bench["problems"]:
        print(f"[{name}] bench: {problem['problem']}: correct {problem['correct']}, speedups {problem['speedups']}")
    done = kforge("integrate", str(folder / f"{name}-config"), "--kernels", bench["bench"], "--runs-dir", str(runs),
                  "--backend", args.backend, "--dtype", "bfloat16", "--precision", "bf16", "--hotspots",
                  str(folder / f"{name}-problems"))
    print(f"\n=== {name}: kforge integrate --hotspots\n{done.stdout}{done.stderr[-3000:]}")


def compiled(name: str, folder: Path, report: dict, args: argparse.Namespace) -> None:
    """torch.compile: each extracted problem's speedup at its served shape, projected over the phase's shares,
    beside the whole model compiled."""
    import torch
    from transformers import AutoConfig, AutoModelForCausalLM

    from kforge_core.hotspots.worker.phases import Driver
    from kforge_core.problem import import_problem_module

    document = json.loads((folder / f"{name}-problems" / "model.json").read_text())
    speedups: dict[str, float] = {}
    for problem, entry in document["problems"].items():
        module = import_problem_module(folder / f"{name}-problems" / entry["file"], f"compiled_{problem}")
        torch.manual_seed(0)
        model = module.Model(*module.get_init_inputs()).cuda().eval()
        inputs = [_cuda(v) for v in module.get_inputs()]
        eager = _median_ms(lambda: model(*inputs))
        fast = torch.compile(model)
        speedups[problem] = eager / _median_ms(lambda: fast(*inputs))
        print(f"[{name}] torch.compile of {problem}: {speedups[problem]:.2f}x at its served shape")
        torch._dynamo.reset()
    torch.manual_seed(0)
    with torch.device("cuda"):
        model = AutoModelForCausalLM.from_config(AutoConfig.from_pretrained(folder / f"{name}-config"),
                                                 dtype=torch.bfloat16).eval()
    ids = torch.randint(0, model.config.vocab_size, (args.batch, args.prompt_tokens), device="cuda")
    from kforge_core.app import App
    from kforge_core.devices import make_device

    device = make_device(App().backend(args.backend).backend)  # the plugin's device, as a worker has it
    device.start()
    driver = Driver(model, (ids,), True)
    eager = {phase: _steps(driver, phase, device, args) for phase in driver.phases}
    model.compile()
    for phase in driver.phases:
        driver.run(phase, 3)  # compiles, and recompiles for the decode's growing cache
    fast = {phase: _steps(driver, phase, device, args) for phase in driver.phases}
    for phase in driver.phases:
        saved = sum(e["share"] * (1 - 1 / speedups[p]) for p, e in document["problems"].items()
                    if e["phase"] == phase)
        print(f"[{name}] torch.compile, {phase}: projected {1 / (1 - saved):.3f}x from the problems compiled alone; "
              f"measured {eager[phase] / fast[phase]:.3f}x for the whole model compiled "
              f"({eager[phase]:.3f} -> {fast[phase]:.3f} ms a step)")


def _steps(driver: object, phase: str, device: object, args: argparse.Namespace) -> float:
    import statistics

    steps = args.decode_tokens if phase == "decode" else 4  # kforge hotspots' --profile-steps
    return statistics.median(driver.step_ms(phase, device, steps, 10))


def _cuda(value: object) -> object:
    import torch

    if isinstance(value, torch.Tensor):
        return value.cuda()
    if isinstance(value, (tuple, list)):
        return type(value)(_cuda(v) for v in value)
    return value


def _median_ms(call: object, repetitions: int = 20) -> float:
    import statistics

    import torch

    with torch.no_grad():
        for _ in range(3):
            call()
        torch.cuda.synchronize()
        samples = []
        for _ in range(repetitions):
            start, end = torch.cuda.Event(enable_timing=True), torch.cuda.Event(enable_timing=True)
            start.record()
            call()
            end.record()
            torch.cuda.synchronize()
            samples.append(start.elapsed_time(end))
    return statistics.median(samples)


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--models", default="llama,qwen3moe")
    parser.add_argument("--backend", default="triton")
    parser.add_argument("--prompt-tokens", type=int, default=512)
    parser.add_argument("--decode-tokens", type=int, default=32)
    parser.add_argument("--batch", type=int, default=1)
    parser.add_argument("--out", default=None, help="keep the reports, problems and model.json files here")
    parser.add_argument("--stages", default="hotspots,integrate,compile")
    parser.add_argument("--compile-models", default="llama", help="models the compile stage runs on")
    args = parser.parse_args()
    missing = _missing_requirements()
    if missing:
        print(f"model_hotspots: {missing}", file=sys.stderr)
        return 2
    folder = Path(args.out) if args.out else Path(tempfile.mkdtemp(prefix="kforge-model-hotspots-"))
    folder.mkdir(parents=True, exist_ok=True)
    stages = set(args.stages.split(","))
    reports = {name: hotspots(name, folder, args) for name in args.models.split(",") if name}
    if "integrate" in stages and reports.get("llama"):
        integrate("llama", folder, args)  # the shipped kernels are Llama's RMSNorm and MLP
    if "compile" in stages:
        for name in args.compile_models.split(","):
            if reports.get(name):
                compiled(name, folder, reports[name], args)
    return 0 if all(reports.values()) else 1


def _missing_requirements() -> str:
    try:
        import transformers  # noqa: F401
    except ImportError:
        return "needs the transformers package (pip install 'kforge-core[transformers]')"
    import torch

    if not torch.cuda.is_available():
        return "needs a CUDA GPU (torch.cuda.is_available() is False)"
    return ""


if __name__ == "__main__":
    os.environ.setdefault("PYTHONUNBUFFERED", "1")
    sys.exit(main())
