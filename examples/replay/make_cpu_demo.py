"""Writes cpu_demo.jsonl, the replay script of `make demo`, from the readable replies in cpu_demo/.

The script plays both agents for examples/problems/elementwise_gelu_scale.py on the cpu backend:
a reply with no code, a Numba typing error, a wrong result (the sigmoid approximation of GELU), a correct but slow
kernel, then optimization rounds: a fast kernel (parallel rows, unit stride, a vectorisable erf), and variants that
turn out slower (float64, the library erf, one thread). Each line's "expect" checks that the loop told the agent what
it should have (the previous failure, the analyst's advice).

Run it after editing a reply:  python examples/replay/make_cpu_demo.py
"""

from __future__ import annotations

import json
from pathlib import Path

HERE = Path(__file__).resolve().parent
REPLIES = HERE / "cpu_demo"
TARGET = HERE / "cpu_demo.jsonl"

# (agent, file, text before the code, usage (input, output tokens), what the prompt must contain)
SCRIPT = [
    ("generation", "01_no_code.md", None, (3400, 110), []),
    ("generation", "02_typing_error.py", "One fused kernel, parallel over rows, a whole row at a time:",
     (3700, 420), ["no fenced code block"]),
    ("generation", "03_wrong_result.py", "The typing error came from calling `math.erf` on a row. This version works "
     "element by element and uses the fast sigmoid form of GELU:", (4300, 450),
     ["No implementation of function", "math.erf(row * INV_SQRT2)"]),
    ("generation", "04_correct_slow.py", "The sigmoid form is an approximation; this version computes the exact "
     "GELU with `math.erf`, element by element:", (4400, 380), ["numerical_mismatch"]),
    ("analysis", "05_analysis.md", None, (2900, 520), ["for c in range(cols):  # column by column"]),
    ("generation", "06_fast.py", "Following the analysis: parallel rows, a unit-stride inner loop, float32 "
     "throughout and a vectorisable erf:", (5200, 610), ["Run on every core", "Current best implementation (f4"]),
    ("analysis", "07_analysis.md", None, (3300, 240), ["Earlier rounds"]),
    ("generation", "08_float64.py", "The same kernel with the approximation evaluated in float64:", (5600, 630),
     ["evaluate them in float64"]),
    ("analysis", "09_analysis.md", None, (3500, 190), ["Round 2:"]),
    ("generation", "10_exact_erf.py", "Back to float32, with the library erf:", (5500, 520), ["Try the library"]),
    ("analysis", "11_analysis.md", None, (3600, 200), ["Round 3:"]),
    ("generation", "12_serial.py", "The float32 kernel on one thread:", (5500, 560), ["parallel=False"]),
]


def reply_text(name: str, lead_in: str | None, replies: Path = REPLIES) -> str:
    text = (replies / name).read_text()
    if name.endswith(".md"):
        return text.rstrip() + "\n"
    return f"{lead_in}\n\n```python\n{text.rstrip()}\n```\n"


def script_lines(script: list[tuple] = SCRIPT, replies: Path = REPLIES) -> list[str]:
    """One JSON line per reply of ``script``, whose files are under ``replies``."""
    lines = []
    for agent, name, lead_in, (tokens_in, tokens_out), contains in script:
        entry = {"agent": agent, "note": name, "reply": reply_text(name, lead_in, replies),
                 "usage": {"input_tokens": tokens_in, "output_tokens": tokens_out}}
        if contains:
            entry["expect"] = {"contains": contains}
        lines.append(json.dumps(entry))
    return lines


if __name__ == "__main__":
    TARGET.write_text("\n".join(script_lines()) + "\n")
    print(f"wrote {TARGET} ({len(SCRIPT)} replies)")
