import pytest

from kforge_core.config import ConfigError, parse_table
from kforge_cuda.options import CudaOptions


def test_defaults_are_valid_and_hash_is_stable():
    assert CudaOptions().hash() == CudaOptions().hash()
    assert CudaOptions().sanitize is False


def test_hash_changes_with_any_option():
    base = CudaOptions()
    changed = [CudaOptions(arch="sm_90a"), CudaOptions(opt_level=2), CudaOptions(extra_nvcc_flags=("--use_fast_math",)),
               CudaOptions(sanitize=True)]
    assert len({base.hash(), *(o.hash() for o in changed)}) == 1 + len(changed)


@pytest.mark.parametrize("kwargs, message", [
    ({"arch": "90"}, "sm_90"),
    ({"arch": "compute_90"}, "sm_90"),
    ({"opt_level": 4}, "opt_level"),
    ({"extra_nvcc_flags": ("-o", "x.so")}, "set by the build step"),
    ({"build_timeout_s": 0}, "build_timeout_s"),
    ({"tool_timeout_s": -1}, "tool_timeout_s"),
])
def test_invalid_options_are_rejected(kwargs, message):
    with pytest.raises(ValueError, match=message):
        CudaOptions(**kwargs)


def test_config_table_parses_into_options():
    options = parse_table(CudaOptions, {"arch": "sm_90a", "extra_nvcc_flags": ["-Xptxas", "-v"], "sanitize": True},
                          where="backends.cuda", source="kforge.toml")
    assert options == CudaOptions(arch="sm_90a", extra_nvcc_flags=("-Xptxas", "-v"), sanitize=True)


def test_config_errors_name_the_key():
    with pytest.raises(ConfigError, match="backends.cuda.arhc"):
        parse_table(CudaOptions, {"arhc": "sm_90"}, where="backends.cuda", source="kforge.toml")
    with pytest.raises(ConfigError, match="arch"):
        parse_table(CudaOptions, {"arch": "ampere"}, where="backends.cuda", source="kforge.toml")


def test_cuda_does_not_warm_up_by_default():
    # load_cuda builds at import (Triton compiles on the first call, which the triton backend's stage makes)
    assert CudaOptions().warmup_forward is False


def test_the_sanitize_flag_turns_on_the_cuda_option(tmp_path, monkeypatch):
    from kforge_core.app import App
    from kforge_core.commands.backend_flags import settings_with_backend_options
    from kforge_cuda.backend import CUDA

    monkeypatch.chdir(tmp_path)
    app = App(load_plugins=False, plugin_modules=("kforge_cuda",))
    settings = settings_with_backend_options(app, {"backend": "cuda"}, ("arch=sm_90a",), sanitize=True)
    assert settings.backend_options(CUDA) == CudaOptions(arch="sm_90a", sanitize=True)
