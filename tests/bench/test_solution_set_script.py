"""``benchmarks/solution_set.py`` on a set laid out as METR's filtered set is: each solution beside the reference it
was written against, named as a KernelBench checkout names the problem, its ``Model`` class given KForge's name."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

from kforge_core.problem import load_problem

SCRIPT = Path(__file__).resolve().parents[2] / "benchmarks" / "solution_set.py"
REFERENCE = '''import torch
import torch.nn as nn


class Model(nn.Module):
    def forward(self, x):
        return torch.relu(x)


def get_inputs():
    return [torch.randn(4, 8)]


def get_init_inputs():
    return []
'''


def test_a_filtered_set_is_laid_out_as_problems_and_solutions_named_as_kernelbench_names_them(tmp_path: Path):
    source, checkout, out = tmp_path / "set", tmp_path / "kb", tmp_path / "out"
    (source / "tasks" / "level_3").mkdir(parents=True)
    (source / "best_agent_solutions" / "level_3").mkdir(parents=True)
    (source / "tasks" / "level_3" / "4_Relu.py").write_text(REFERENCE)
    (source / "best_agent_solutions" / "level_3" / "task_4.py").write_text(REFERENCE.replace("relu", "clamp_min"))
    (source / "tasks" / "level_3" / "7_Other.py").write_text(REFERENCE)
    (source / "best_agent_solutions" / "level_3" / "task_7.py").write_text(REFERENCE)  # no problem of that number
    (source / "best_agent_solutions" / "level_3" / "task_9.py").write_text(REFERENCE)  # nor a reference in the set
    (checkout / "KernelBench" / "level3").mkdir(parents=True)
    (checkout / "KernelBench" / "level3" / "4_ReLUNow.py").write_text(REFERENCE)
    done = subprocess.run([sys.executable, str(SCRIPT), "--kernelbench", str(checkout), "--source", str(source),
                           "--out", str(out)], capture_output=True, text=True)
    assert done.returncode == 0, done.stderr
    assert "1 tasks written" in done.stdout and "1 without a problem file" in done.stdout
    assert (out / "problems" / "level3" / "4_ReLUNow.py").read_text() == REFERENCE
    solution = (out / "solutions" / "level3" / "4_ReLUNow.py").read_text()
    assert solution.endswith("ModelNew = Model  # the set names its solution's class Model\n")
    assert "clamp_min" in solution
    load_problem(out / "problems" / "level3" / "4_ReLUNow.py")
    namespace: dict = {}
    exec(compile(solution, "solution", "exec"), namespace)
    assert namespace["ModelNew"] is namespace["Model"]
