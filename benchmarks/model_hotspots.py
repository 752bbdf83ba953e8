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
              f"({ratio:.1%}; {'within' if abs(ratio - 1) <= 0.10 else 'NOT within'} 10%); kernels "
              f"{figures['profiled_device_ms']:.4g} ms, the device busy {figures['device_busy']:.0%} of the step")
    for row in report["rows"]:
        if row["kind"] != "aten" and not row.get("problem"):
            print(f"[{name}] not extracted: {row['phase']} {row['group']}: {row.get('why_not')}")
    return report


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--models", default="llama,qwen3moe")
    parser.add_argument("--backend", default="triton")
    parser.add_argument("--prompt-tokens", type=int, default=512)
    parser.add_argument("--decode-tokens", type=int, default=32)
    parser.add_argument("--batch", type=int, default=1)
    parser.add_argument("--out", default=None, help="keep the reports, problems and model.json files here")
    parser.add_argument("--stages", default="hotspots,integrate,compile")
    args = parser.parse_args()
    missing = _missing_requirements()
    if missing:
        print(f"model_hotspots: {missing}", file=sys.stderr)
        return 2
    folder = Path(args.out) if args.out else Path(tempfile.mkdtemp(prefix="kforge-model-hotspots-"))
    folder.mkdir(parents=True, exist_ok=True)
    reports = {name: hotspots(name, folder, args) for name in args.models.split(",") if name}
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
