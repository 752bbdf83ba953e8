"""End to end on a GPU: a Llama-style causal LM from ``transformers``, built from TinyLlama-1.1B's published config
with random weights, with accepted kernels swapped in by ``kforge integrate``; prints whether the outputs stay
within the precision contract (in bfloat16: within the tolerances or, failing them, as close to a float32 run of
the untouched model as the untouched model itself) and the prefill and decode tokens/s with and without the kernels.

    python benchmarks/integrate_e2e.py --kernels DIR [--backend triton] [--dtype bfloat16] [--layers 8]
        [--map LlamaRMSNorm=rmsnorm ...]

DIR is a package written by ``kforge export`` (or runs/benches, comma-separated), e.g. the RMSNorm and SwiGLU or
activation kernels a Triton or CUDA bench accepted. Needs transformers and a CUDA GPU; says so and stops without.
A kernel faster alone and slower in the model is printed as such: the figures are what they are.
"""

from __future__ import annotations

import argparse
import json
import subprocess
import sys
import tempfile
from pathlib import Path

from kforge_core.integrate.report import reference_lines

# TinyLlama/TinyLlama-1.1B-Chat-v1.0's config.json (the architecture; the weights are random here)
TINYLLAMA = {
    "architectures": ["LlamaForCausalLM"], "model_type": "llama", "hidden_size": 2048, "intermediate_size": 5632,
    "num_attention_heads": 32, "num_key_value_heads": 4, "num_hidden_layers": 22, "hidden_act": "silu",
    "max_position_embeddings": 2048, "rms_norm_eps": 1e-05, "rope_theta": 10000.0, "vocab_size": 32000,
    "tie_word_embeddings": False, "attention_bias": False, "bos_token_id": 1, "eos_token_id": 2,
    "torch_dtype": "bfloat16",
}


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--kernels", required=True, action="append", help="exported package dir, or runs")
    parser.add_argument("--backend", default="triton", help="the backend whose device runs the model")
    parser.add_argument("--dtype", default="bfloat16", choices=("float32", "float16", "bfloat16"))
    parser.add_argument("--precision", default=None, help="precision contract (default: bf16 for bfloat16, ...)")
    parser.add_argument("--layers", type=int, default=TINYLLAMA["num_hidden_layers"], help="decoder layers")
    parser.add_argument("--prompt-tokens", type=int, default=512)
    parser.add_argument("--decode-tokens", type=int, default=64)
    parser.add_argument("--map", action="append", default=[], help="Layer=kernel[:attr=path,...]")
    parser.add_argument("--runs-dir", default=None)
    args = parser.parse_args()
    problem = _missing_requirements()
    if problem:
        print(f"integrate_e2e: {problem}", file=sys.stderr)
        return 2
    precision = args.precision or {"bfloat16": "bf16", "float16": "fp16", "float32": "fp32"}[args.dtype]
    with tempfile.TemporaryDirectory(prefix="kforge-llama-") as folder:
        config = dict(TINYLLAMA, num_hidden_layers=args.layers)
        (Path(folder) / "config.json").write_text(json.dumps(config, indent=2))
        command = [sys.executable, "-m", "kforge_core", "integrate", folder, "--backend", args.backend,
                   "--dtype", args.dtype, "--precision", precision, "--prompt-tokens", str(args.prompt_tokens),
                   "--decode-tokens", str(args.decode_tokens), "--json"]
        for source in args.kernels:
            command += ["--kernels", source]
        for mapping in args.map:
            command += ["--map", mapping]
        if args.runs_dir:
            command += ["--runs-dir", args.runs_dir]
        done = subprocess.run(command, capture_output=True, text=True)
    if done.returncode != 0:
        print(done.stdout + done.stderr, file=sys.stderr)
        return done.returncode
    report = json.loads(done.stdout)
    _print(report, args)
    swapped = len(report["layers"])
    if swapped < 2:
        print(f"only {swapped} kind(s) of layer were swapped; this benchmark wants at least two", file=sys.stderr)
        return 1
    return 0 if report["outputs"]["within_contract"] else 1


def _missing_requirements() -> str:
    try:
        import transformers  # noqa: F401
    except ImportError:
        return "needs the transformers package (pip install 'kforge-core[transformers]')"
    import torch

    if not torch.cuda.is_available():
        return "needs a CUDA GPU (torch.cuda.is_available() is False)"
    return ""


def _print(report: dict, args: argparse.Namespace) -> None:
    print(f"model: {report['model']}, {args.layers} layers, {report['dtype']}, on {report['device']} "
          f"({report['backend']} backend)")
    for layer in report["layers"]:
        verdict = "faster" if layer["speedup"] >= 1 else "SLOWER"
        print(f"  {layer['layer_class']:<20} <- {layer['kernel']:<20} {len(layer['modules']):>3} modules  "
              f"{layer['original_ms']:.4f} -> {layer['kernel_ms']:.4f} ms  {layer['speedup']:.2f}x ({verdict} alone)")
    for miss in report["not_matched"]:
        print(f"  not matched: {miss['kernel']} {miss['layer']}: {miss['why']}")
    outputs = report["outputs"]
    print(f"outputs: {'within' if outputs['within_contract'] else 'NOT within'} the {report['precision']} contract "
          f"({outputs['message']})")
    for line in reference_lines(outputs):  # which rule decided, and each output's distance from the float32 run
        print(line)
    before, after, speedups = (report["end_to_end"][k] for k in ("untouched", "with_kernels", "speedups"))
    print(f"{'':<10}{'untouched':>14}{'with kernels':>14}{'speedup':>10}")
    print(f"{'forward':<10}{before['forward_ms']:>11.3f} ms{after['forward_ms']:>11.3f} ms{speedups['forward']:>9.3f}x")
    for phase in ("prefill", "decode"):
        key = f"{phase}_tokens_per_s"
        print(f"{phase:<10}{before[key]:>10,.0f} t/s{after[key]:>10,.0f} t/s{speedups[phase]:>9.3f}x")
    method = report["timing_method"]
    print(f"timing: median of {method['repetitions']} after {method['warmup']} warm-up on {method['device']}")


if __name__ == "__main__":
    sys.exit(main())
