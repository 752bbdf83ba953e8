"""Availability is said without importing torch: torch's build from its version file, the GPU from the driver."""

from __future__ import annotations

import ctypes
import subprocess
import sys

import pytest

from kforge_nvidia import availability
from kforge_nvidia.availability import TorchBuild, device_detail, device_problem, installed_torch


class _Driver:
    """The libcuda calls availability makes, answering for ``devices`` GPUs named ``name``."""

    def __init__(self, devices: int = 1, version: int = 13000, name: bytes = b"NVIDIA H100 80GB HBM3") -> None:
        self.devices, self.version, self.name = devices, version, name

    def cuDriverGetVersion(self, value):
        value._obj.value = self.version
        return 0

    def cuInit(self, flags):
        return 0 if self.devices else 100  # CUDA_ERROR_NO_DEVICE

    def cuDeviceGetCount(self, count):
        count._obj.value = self.devices
        return 0

    def cuDeviceGet(self, device, ordinal):
        return 0 if ordinal < self.devices else 101  # CUDA_ERROR_INVALID_DEVICE

    def cuDeviceGetAttribute(self, value, attribute, device):
        value._obj.value = {75: 9, 76: 0, 16: 132}.get(attribute, 0)
        return 0

    def cuDeviceGetName(self, buffer, length, device):
        buffer.value = self.name[: length - 1]
        return 0


def _torch(tmp_path, cuda: str | None, version: str = "2.11.0+cu130"):
    """A torch package that cannot be imported, whose version file says ``version`` and ``cuda``."""
    package = tmp_path / "torch"
    package.mkdir()
    (package / "__init__.py").write_text("raise ImportError('availability imported torch')\n")
    (package / "version.py").write_text(
        "from typing import Optional\n\n"
        f"__version__ = {version!r}\ndebug = False\ncuda: Optional[str] = {cuda!r}\nhip: Optional[str] = None\n")
    return tmp_path


@pytest.fixture
def torch_with_cuda(tmp_path, monkeypatch):
    monkeypatch.syspath_prepend(str(_torch(tmp_path, "13.0")))


def _driver(monkeypatch, **answers):
    monkeypatch.setattr(ctypes, "CDLL", lambda name: _Driver(**answers))


def test_the_version_file_is_read_without_importing_torch(tmp_path):
    found = installed_torch([str(_torch(tmp_path, "13.0"))])
    assert found == TorchBuild("2.11.0+cu130", "13.0")
    assert installed_torch([str(tmp_path / "nowhere")]) is None


def test_a_gpu_the_driver_sees_is_available_and_described(torch_with_cuda, monkeypatch):
    _driver(monkeypatch)
    assert device_problem() is None
    assert device_detail() == "NVIDIA H100 80GB HBM3, sm_90, 132 SMs, CUDA 13.0"


def test_a_torch_without_cuda_is_said(tmp_path, monkeypatch):
    monkeypatch.syspath_prepend(str(_torch(tmp_path, None, version="2.11.0+cpu")))
    _driver(monkeypatch)
    assert device_problem() == "no CUDA device (this torch 2.11.0+cpu is built without CUDA)"


def test_no_driver_and_no_gpu_are_said(torch_with_cuda, monkeypatch):
    def missing(name):
        raise OSError(f"{name}: cannot open shared object file")

    monkeypatch.setattr(ctypes, "CDLL", missing)
    assert device_problem() == "no CUDA device (no NVIDIA driver: libcuda.so.1 cannot be loaded)"
    _driver(monkeypatch, devices=0)
    assert device_problem() == "no CUDA device"


def test_a_driver_older_than_torchs_cuda_is_said(torch_with_cuda, monkeypatch):
    _driver(monkeypatch, version=12040)
    assert device_problem() == ("no CUDA device this torch can use: the NVIDIA driver supports CUDA 12.4, torch "
                                "2.11.0+cu130 needs CUDA 13.0 (update the driver)")
    _driver(monkeypatch, version=13020)  # a newer minor version of the same major runs it
    assert device_problem() is None


def test_no_torch_is_said(tmp_path, monkeypatch):
    monkeypatch.setattr(availability, "installed_torch", lambda search_path=None: None)
    assert device_problem() == "no CUDA device can be used: torch is not installed (pip install torch)"


def test_the_answer_here_imports_no_torch():
    """What this machine's torch and driver give, in a process that must not import torch to give it."""
    script = ("import sys\nfrom kforge_nvidia.availability import device_detail, device_problem\n"
              "problem = device_problem()\ndetail = device_detail() if problem is None else ''\n"
              "print(problem, detail, sep='|')\nprint('torch' in sys.modules)\n")
    done = subprocess.run([sys.executable, "-c", script], capture_output=True, text=True, timeout=120)
    assert done.returncode == 0, done.stderr
    answer, imported = done.stdout.splitlines()
    assert imported == "False"
    assert answer.startswith("no CUDA device") or "sm_" in answer


@pytest.mark.gpu
def test_the_driver_says_what_torch_says():
    import torch

    assert device_problem() is None and torch.cuda.is_available()
    props = torch.cuda.get_device_properties(0)
    expected = f"{props.name}, sm_{props.major}{props.minor}, {props.multi_processor_count} SMs, CUDA {torch.version.cuda}"
    assert device_detail() == expected
