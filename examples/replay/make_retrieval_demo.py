"""Writes retrieval_demo.jsonl: the replay script of a run on retrieval_demo/bias_gelu.py (cpu backend) that is
shown the kernel of an earlier run on a related problem, elementwise_gelu_scale (the `make demo` run).

Its one reply carries the retrieved kernel's erf over to the new problem; its "expect" checks that the generation
prompt held the retrieved kernel and said why it was chosen.

    python examples/replay/make_retrieval_demo.py
"""

from __future__ import annotations

import json
from pathlib import Path

from make_cpu_demo import reply_text

HERE = Path(__file__).resolve().parent
REPLIES = HERE / "retrieval_demo"
TARGET = HERE / "retrieval_demo.jsonl"

SCRIPT = [
    ("generation", "01_bias_gelu.py", "The retrieved elementwise_gelu_scale kernel already has a fast erf; the same "
     "loop nest, with the bias added per column:", (5200, 560),
     ["Kernels that worked before, retrieved for this problem", "Reference 1: elementwise_gelu_scale on cpu",
      "both compute gelu"]),
]


def main() -> None:
    lines = []
    for agent, name, lead_in, (tokens_in, tokens_out), contains in SCRIPT:
        lines.append(json.dumps({
            "agent": agent, "note": name, "reply": reply_text(name, lead_in, REPLIES),
            "usage": {"input_tokens": tokens_in, "output_tokens": tokens_out}, "expect": {"contains": contains}}))
    TARGET.write_text("\n".join(lines) + "\n")


if __name__ == "__main__":
    main()
