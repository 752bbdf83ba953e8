"""Writes retrieval_demo.jsonl: the replay script of a run on retrieval_demo/bias_gelu.py (cpu backend) that is
shown the kernel of an earlier run on a related problem, elementwise_gelu_scale (the `make demo` run).

Its one reply carries the retrieved kernel's erf over to the new problem; its "expect" checks that the generation
prompt held the retrieved kernel and said why it was chosen.

    python examples/replay/make_retrieval_demo.py
"""

from __future__ import annotations

from pathlib import Path

from make_cpu_demo import script_lines

HERE = Path(__file__).resolve().parent
REPLIES = HERE / "retrieval_demo"
TARGET = HERE / "retrieval_demo.jsonl"

# (agent, file, text before the code, usage (input, output tokens), what the prompt must contain)
SCRIPT = [
    ("generation", "01_bias_gelu.py", "The retrieved elementwise_gelu_scale kernel already has a fast erf; the same "
     "loop nest, with the bias added per column:", (5200, 560),
     ["Kernels that worked before, retrieved for this problem", "Reference 1: elementwise_gelu_scale on cpu",
      "both compute gelu"]),
]


if __name__ == "__main__":
    TARGET.write_text("\n".join(script_lines(SCRIPT, REPLIES)) + "\n")
