"""Loading a problem validates it, and each kind of mistake gets its own precise message."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from click.testing import CliRunner

from kforge_core.app import App
from kforge_core.cli import cli
from kforge_core.problem import ProblemError, load_problem

from .helpers import GOOD_PROBLEM, write_problem

EXAMPLES = sorted((Path(__file__).resolve().parents[2] / "examples" / "problems").glob("*.py"))

HEADER = "import torch\nimport torch.nn as nn\n"
MODEL = "class Model(nn.Module):\n    def forward(self, x):\n        return x * 2\n"
GETTERS = "def get_inputs():\n    return [torch.randn(3)]\n\ndef get_init_inputs():\n    return []\n"


def test_a_good_problem_is_described(tmp_path):
    problem = load_problem(write_problem(tmp_path))
    assert problem.name == "tiny_linear"
    assert [s.describe() for s in problem.inputs] == ["tensor[2, 8] float32"]
    assert [s.describe() for s in problem.init_inputs] == ["float 2.0"]
    assert [s.describe() for s in problem.outputs] == ["tensor[2, 4] float32"]
    assert problem.parameter_count == 8 * 4 + 4
    assert problem.source == GOOD_PROBLEM and problem.path.is_absolute()


@pytest.mark.parametrize("path", EXAMPLES, ids=lambda p: p.stem)
def test_the_shipped_example_problems_are_valid(path):
    assert load_problem(path).outputs


SEEN_DEVICES = HEADER + """
SEEN = []


class Model(nn.Module):
    def __init__(self, channels):
        super().__init__()
        self.conv = nn.ConvTranspose3d(channels, 8, 3)

    def forward(self, x):
        SEEN.append(x.device.type)
        return torch.nn.functional.gelu(self.conv(x)), x.sum(dim=1).to(torch.float64)


def get_inputs():
    return [torch.randn(2, 4, 6, 6, 6)]


def get_init_inputs():
    return [4]
"""


def test_a_problem_is_described_without_computing_its_forward(tmp_path):
    # shapes and dtypes come from the meta device: a ConvTranspose3d problem's forward on the CPU took 4 s of a
    # bench's start, and a large problem's would take minutes and its memory
    import sys

    problem = load_problem(write_problem(tmp_path, SEEN_DEVICES, name="seen_devices.py"))
    assert [s.describe() for s in problem.inputs] == ["tensor[2, 4, 6, 6, 6] float32"]
    assert [s.describe() for s in problem.outputs] == ["tensor[2, 8, 8, 8, 8] float32", "tensor[2, 6, 6, 6] float64"]
    assert problem.parameter_count == 4 * 8 * 27 + 8
    seen = sys.modules["kforge_problem_seen_devices"].SEEN
    assert set(seen) == {"meta"}  # its forward ran on no data: once described, then at other sizes for its variants


def test_a_problem_that_reads_its_values_is_described_on_the_cpu(tmp_path):
    source = HEADER + """
class Model(nn.Module):
    def forward(self, x):
        if x.abs().max().item() > 100:  # a value read: no answer on the meta device
            return x
        return x[:, :2] * 2


def get_inputs():
    return [torch.randn(3, 5)]


def get_init_inputs():
    return []
"""
    problem = load_problem(write_problem(tmp_path, source, name="reads_values.py"))
    assert [s.describe() for s in problem.outputs] == ["tensor[3, 2] float32"]

BAD_PROBLEMS = {
    "syntax": (HEADER + "def get_inputs(:\n", r":3: syntax error: "),
    "import": (HEADER + "import not_a_module_kforge\n", r"failed to import: ModuleNotFoundError"),
    "no_model": (HEADER + GETTERS, r"defines no Model$"),
    "model_function": (HEADER + "def Model():\n    pass\n" + GETTERS,
                       r"Model is not a torch.nn.Module subclass \(it is a function\)"),
    "model_plain_class": (HEADER + "class Model:\n    pass\n" + GETTERS,
                          r"Model is not a torch.nn.Module subclass \(it is a type\)"),
    "no_get_inputs": (HEADER + MODEL + "def get_init_inputs():\n    return []\n", r"defines no get_inputs\(\)$"),
    "no_get_init_inputs": (HEADER + MODEL + "def get_inputs():\n    return [torch.randn(3)]\n",
                           r"defines no get_init_inputs\(\)$"),
    "get_inputs_raises": (HEADER + MODEL + "def get_inputs():\n    raise ValueError('no data')\n"
                          "def get_init_inputs():\n    return []\n", r"get_inputs\(\) raised ValueError: no data"),
    "get_init_inputs_raises": (HEADER + MODEL + "def get_inputs():\n    return []\n"
                               "def get_init_inputs():\n    return 1 / 0\n",
                               r"get_init_inputs\(\) raised ZeroDivisionError"),
    "inputs_not_a_list": (HEADER + MODEL + "def get_inputs():\n    return torch.randn(3)\n"
                          "def get_init_inputs():\n    return []\n", r"get_inputs\(\) returned Tensor, expected a list"),
    "input_is_an_object": (HEADER + MODEL + "def get_inputs():\n    return [torch.randn(3), (1, [object()])]\n"
                           "def get_init_inputs():\n    return []\n",
                           r"get_inputs\(\)\[1\]\[1\]\[0\] is a object, expected a tensor, number, bool, string, None"),
    "init_raises": (HEADER + "class Model(nn.Module):\n    def __init__(self):\n        super().__init__()\n"
                    "        raise RuntimeError('bad init')\n" + GETTERS,
                    r"Model\(\*get_init_inputs\(\)\) raised RuntimeError: bad init"),
    "forward_raises": (HEADER + "class Model(nn.Module):\n    def forward(self, x):\n        return x.view(2, 2)\n"
                       + GETTERS, r"Model's forward raised RuntimeError: .* on the problem's own inputs"),
    "output_not_tensor": (HEADER + "class Model(nn.Module):\n    def forward(self, x):\n        return {'y': x}\n"
                          + GETTERS, r"Model's forward is a dict; outputs must be tensors"),
    "second_output_not_tensor": (HEADER + "class Model(nn.Module):\n    def forward(self, x):\n"
                                 "        return x, 3\n" + GETTERS,
                                 r"output 1 of Model's forward is a int; outputs must be tensors"),
    "nested_output_not_tensor": (HEADER + "class Model(nn.Module):\n    def forward(self, x):\n"
                                 "        return x, [x, 'y']\n" + GETTERS,
                                 r"output 1\[1\] of Model's forward is a str; outputs must be tensors"),
}


@pytest.mark.parametrize("case", sorted(BAD_PROBLEMS))
def test_each_bad_problem_has_a_precise_message(tmp_path, case):
    source, pattern = BAD_PROBLEMS[case]
    path = write_problem(tmp_path, source, name=f"{case}.py")
    with pytest.raises(ProblemError, match=pattern) as info:
        load_problem(path)
    assert str(path) in str(info.value)


def test_missing_file(tmp_path):
    with pytest.raises(ProblemError, match="problem file not found: .*nope.py"):
        load_problem(tmp_path / "nope.py")


def test_kforge_check_prints_the_description(tmp_path):
    path = write_problem(tmp_path)
    result = CliRunner().invoke(cli, ["check", str(path), "--json"], obj=App())
    assert result.exit_code == 0, result.output
    described = json.loads(result.output)
    assert described["outputs"] == ["tensor[2, 4] float32"]
    assert described["parameter_count"] == 36
    assert described["weight_bytes"] == 36 * 4  # float32 parameters, no buffers
    assert described["footprint_bytes"] == 36 * 4 + (2 * 8 + 2 * 4) * 4  # and one call's input and output
    assert described["forward_peak_bytes"] == 2 * (2 * 4) * 4  # the layer's output and its scaled copy
    assert described["call_peak_bytes"] == 36 * 4 + 2 * 8 * 4 + described["forward_peak_bytes"]
    assert described["reference_forward_cpu_ms"] > 0


def test_kforge_check_table_output(tmp_path):
    result = CliRunner().invoke(cli, ["check", str(write_problem(tmp_path))], obj=App())
    assert result.exit_code == 0
    assert "tensor[2, 8] float32" in result.output and "problem OK" in result.output
    assert "footprint" in result.output and "parameters and buffers 144 B" in result.output


def test_kforge_check_reports_a_bad_problem_cleanly(tmp_path):
    path = write_problem(tmp_path, HEADER + GETTERS, name="empty.py")
    result = CliRunner().invoke(cli, ["check", str(path)], obj=App())
    assert result.exit_code == 1
    assert result.output.strip() == f"Error: {path} defines no Model"
