"""Availability says exactly why not: the DSL missing, no GPU, an arch the backend does not target."""

import pytest

from kforge_cute.availability import DeviceSeen, cute_availability, judge
from kforge_cute.dsl_info import dsl_version

H100 = DeviceSeen("NVIDIA H100 80GB HBM3", (9, 0))


def test_available_on_hopper_and_blackwell_with_the_dsl():
    answer = judge("4.8.1", H100, "0.1.15")
    assert answer.available and answer.detail == "NVIDIA H100 80GB HBM3, sm_90, CuTe DSL 4.8.1, TVM-FFI 0.1.15"
    assert judge("4.8.1", H100).detail.endswith("no TVM-FFI (kernels are called through DLPack)")
    assert judge("4.8.1", DeviceSeen("NVIDIA B200", (10, 0))).available


def test_each_missing_piece_is_named():
    assert judge(None, H100).reason == "the CuTe DSL is not installed (pip install 'kforge-cute[dsl]')"
    assert judge("4.8.1", None).reason == "no CUDA device (no NVIDIA driver or GPU found)"
    ampere = judge("4.8.1", DeviceSeen("NVIDIA A100-SXM4-80GB", (8, 0))).reason
    assert ampere == "NVIDIA A100-SXM4-80GB is sm_80; the CuTe DSL backend needs Hopper or Blackwell (sm_90 or newer)"


def test_every_reason_that_applies_is_given_at_once():
    reason = judge(None, None).reason
    assert "not installed" in reason and "no CUDA device" in reason


def test_this_machine(monkeypatch):
    from kforge_nvidia.driver import driver_capability

    if driver_capability() is not None:
        pytest.skip("a CUDA device is present: the no-GPU answer cannot be checked here")
    answer = cute_availability()
    assert not answer.available and "no CUDA device" in answer.reason
    assert ("not installed" in answer.reason) is (dsl_version() is None)


def test_dsl_version_without_pip_metadata_is_read_from_the_package(tmp_path, monkeypatch):
    package = tmp_path / "cutlass"
    package.mkdir()
    (package / "__init__.py").write_text('import heavy_things\n__version__ = "4.8.1"\n')
    monkeypatch.syspath_prepend(str(tmp_path))
    import importlib.metadata

    def no_metadata(name):
        raise importlib.metadata.PackageNotFoundError(name)

    monkeypatch.setattr(importlib.metadata, "version", no_metadata)
    monkeypatch.delitem(__import__("sys").modules, "cutlass", raising=False)
    assert dsl_version() == "4.8.1"
