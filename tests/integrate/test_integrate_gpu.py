"""On an NVIDIA GPU: the llm suite's Triton solutions exported as a torch-cuda package, loaded through kernels, and
swapped into a small Llama in bfloat16 (``pytest -m gpu tests/integrate``)."""

from __future__ import annotations

from pathlib import Path

import pytest

from kforge_core.export import AcceptedKernel, prepare, write_package
from kforge_core.integrate.request import IntegrateRequest, KernelPackage
from kforge_core.integrate.worker.run import integrate
from kforge_core.records import Candidate

from .conftest import REPO, TIMING

pytestmark = pytest.mark.gpu
LLM = REPO / "examples" / "suites" / "llm"


def test_triton_kernels_in_a_llama_on_the_gpu(tmp_path: Path) -> None:
    pytest.importorskip("kernels")
    transformers = pytest.importorskip("transformers")
    accepted = [AcceptedKernel(
        problem=name, problem_path=str(LLM / "problems" / f"{name}.py"), run_id=None, bench_id="b", backend="triton",
        precision="fp32", candidate=Candidate.from_path(LLM / "solutions" / "triton" / f"{name}.py"), runtime_ms=1.0,
        speedups=(("eager", 1.0),), baselines_ms=(), precision_bits=None, tolerances=(), timing=TIMING)
        for name in ("1_llama_rmsnorm", "2_swiglu_mlp")]
    exported, refused = prepare(accepted, lambda backend: "cuda")
    result = write_package(tmp_path / "pkg", "kforge-llm", exported, refused)
    assert result.variant == "torch-cuda"
    config = transformers.LlamaConfig(hidden_size=256, intermediate_size=512, num_hidden_layers=2,
                                      num_attention_heads=4, num_key_value_heads=2, vocab_size=512)
    config.save_pretrained(tmp_path / "llama")
    report = integrate(IntegrateRequest(
        model=str(tmp_path / "llama"), packages=(KernelPackage(str(tmp_path / "pkg"), through_kernels=True),),
        mappings=(), backend="triton", programming_model="Triton", device="cuda",
        device_class="kforge_nvidia.device:CudaDevice", precision="bf16", tolerances=(("bfloat16", 2e-2, 2e-2),),
        warmup=1, repetitions=3, dtype="bfloat16", prompt_tokens=32, decode_tokens=4, workdir=str(REPO)))
    changed = {layer["layer_class"]: layer["kernel"] for layer in report["layers"]}
    assert changed == {"LlamaRMSNorm": "llama_rmsnorm", "LlamaMLP": "swiglu_mlp"}, report["not_matched"]
    assert report["outputs"]["within_contract"], report["outputs"]["message"]
    assert report["outputs"]["reference"] == "float32 run of the untouched model"
    assert 0 < report["outputs"]["untouched_error"][0]["relative_rms"] < 0.1
    assert set(report["end_to_end"]["speedups"]) == {"forward", "prefill", "decode"}
