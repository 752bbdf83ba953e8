"""Writes cute_demo.jsonl, a replay script for the cute backend (the CuTe DSL, on a Hopper or Blackwell GPU) on the
backend's own example problem, from the readable replies in cute_demo/:

    kforge run plugins/kforge_cute/kforge_cute/examples/cute_problem.py --backend cute \\
        --llm replay:examples/replay/cute_demo.jsonl

The script plays both agents: a kernel that does not compile (a loop-carried Python int that becomes a float), a
correct but slow one (a warp per row, three passes, scalar loads), the analyst's recommendations from its Nsight
Compute profile, and the fast kernel (the backend's single-shot example). The run ends when the script does.

Run it after editing a reply:  python examples/replay/make_cute_demo.py
"""

from __future__ import annotations

import json
import sys
from pathlib import Path

HERE = Path(__file__).resolve().parent
sys.path.insert(0, str(HERE))

from make_cpu_demo import script_lines  # noqa: E402

REPLIES = HERE / "cute_demo"
TARGET = HERE / "cute_demo.jsonl"
FAST = "../../../plugins/kforge_cute/kforge_cute/examples/cute_solution.py"

# (agent, file under cute_demo/, text before the code, usage (input, output tokens), what the prompt must contain)
# The first reply is the slow kernel with its accumulator started as a Python int (see demo_lines).
SCRIPT = [
    ("generation", "02_warp_per_row.py", "One warp per row: the lanes stride over the columns, and the two sums go "
     "through warp shuffles:", (6100, 900), []),
    ("generation", "02_warp_per_row.py", "The accumulator started as a Python int; it is a Float32 from the start now:",
     (7400, 880), ["TYPE_UNSTABLE_JOIN", "total = 0"]),
    ("analysis", "03_analysis.md", None, (4300, 450), ["warp_sum"]),
    ("generation", FAST, "Following the analysis: a CTA of 256 threads per row, the row in registers after "
     "128-bit loads, both reductions through shuffles and shared memory:", (8900, 1500),
     ["Keep the row in registers"]),
]

FLOAT_TOTAL, INT_TOTAL = "    total = cutlass.Float32(0.0)\n", "    total = 0\n"


def demo_lines() -> list[str]:
    """The script's lines; the first reply's kernel starts its loop-carried sum as a Python int, which the DSL
    rejects (the int and the Float32 it becomes in the loop are two types)."""
    lines = script_lines(SCRIPT, REPLIES)
    first = json.loads(lines[0])
    assert FLOAT_TOTAL in first["reply"]
    first["reply"] = first["reply"].replace(FLOAT_TOTAL, INT_TOTAL)
    first["note"] = f"{first['note']}, with `total = 0`"
    return [json.dumps(first), *lines[1:]]


if __name__ == "__main__":
    TARGET.write_text("\n".join(demo_lines()) + "\n")
    print(f"wrote {TARGET} ({len(SCRIPT)} replies)")
