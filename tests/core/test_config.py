"""Settings: file, then KFORGE_* environment, then flags; every mistake names the key and where it came from."""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path

import pytest

from kforge_core import Backend
from kforge_core.config import ConfigError, load_settings
from kforge_core.tolerances import tolerance_in_effect


def write(directory: Path, name: str, text: str) -> Path:
    path = directory / name
    path.write_text(text)
    return path


def test_defaults_without_any_source(tmp_path):
    settings = load_settings(tmp_path, environ={})
    assert settings.backend == "cpu"
    assert settings.harness.trials == 5
    assert settings.harness.tolerances == {}  # the user named none: kforge_core.tolerances' defaults apply
    assert tolerance_in_effect("float32", settings.harness).pair == (1e-4, 1e-4)
    assert settings.harness.precision == "fp32"
    assert settings.sources == ()



@pytest.mark.parametrize("cores, spares", [(2, 1), (7, 1), (8, 2), (16, 2)])
def test_two_spare_workers_where_the_machine_has_the_cores_to_start_them(tmp_path, monkeypatch, cores, spares):
    monkeypatch.setattr("os.cpu_count", lambda: cores)
    assert load_settings(tmp_path, environ={}).harness.spare_workers == spares
    write(tmp_path, "kforge.toml", "[harness]\nspare_workers = 3\n")
    assert load_settings(tmp_path, environ={}).harness.spare_workers == 3  # a setting names it outright

def test_kforge_toml_then_environment_then_flags(tmp_path):
    write(tmp_path, "kforge.toml", 'backend = "cuda"\n[harness]\ntrials = 7\nseed = 1\n[llm]\nmodel = "openai:a"\n')
    env = {"KFORGE_HARNESS__TRIALS": "9", "KFORGE_LLM__MODEL": "anthropic:b", "HOME": "/x"}
    settings = load_settings(tmp_path, environ=env, flags={"llm.model": "ollama:c", "backend": None})
    assert settings.backend == "cuda"  # file (the flag was None: not given)
    assert settings.harness.seed == 1  # file
    assert settings.harness.trials == 9  # environment beats file
    assert settings.llm.model == "ollama:c"  # flag beats environment
    assert settings.sources == (str(tmp_path / "kforge.toml"), "environment", "command line")


def test_pyproject_tool_kforge_table(tmp_path):
    write(tmp_path, "pyproject.toml", '[project]\nname = "x"\n[tool.kforge]\nbackend = "triton"\n')
    assert load_settings(tmp_path, environ={}).backend == "triton"


def test_kforge_toml_wins_over_pyproject(tmp_path):
    write(tmp_path, "pyproject.toml", '[tool.kforge]\nbackend = "triton"\n')
    write(tmp_path, "kforge.toml", 'backend = "cuda"\n')
    assert load_settings(tmp_path, environ={}).backend == "cuda"


def test_unknown_key_names_key_and_file(tmp_path):
    path = write(tmp_path, "kforge.toml", "[harness]\ntrails = 3\n")
    with pytest.raises(ConfigError) as info:
        load_settings(tmp_path, environ={})
    assert str(info.value).startswith(f"{path}: unknown key 'harness.trails'")
    assert "trials" in str(info.value)  # the hint lists the known keys


def test_wrong_type_names_key_and_file(tmp_path):
    path = write(tmp_path, "kforge.toml", '[harness]\ntrials = "five"\n')
    with pytest.raises(ConfigError, match=rf"^{path}: harness.trials must be an integer, got 'five'$"):
        load_settings(tmp_path, environ={})


def test_wrong_type_in_a_nested_value(tmp_path):
    path = write(tmp_path, "kforge.toml", "[harness.tolerances]\nfloat32 = [1e-4]\n")
    with pytest.raises(ConfigError, match=rf"^{path}: harness.tolerances.float32 must be a list of 2 values"):
        load_settings(tmp_path, environ={})


def test_invalid_value_is_reported_with_its_source(tmp_path):
    write(tmp_path, "kforge.toml", '[harness]\ncheat_policy = "lenient"\n')
    with pytest.raises(ConfigError, match=r"harness.cheat_policy must be one of 'strict', 'report'"):
        load_settings(tmp_path, environ={})


def test_the_speed_of_light_target_is_a_fraction(tmp_path):
    assert load_settings(tmp_path, environ={}).loop.sol_target == 0.9
    assert load_settings(tmp_path, environ={"KFORGE_LOOP__SOL_TARGET": "0"}).loop.sol_target == 0.0
    write(tmp_path, "kforge.toml", "[loop]\nsol_target = 1.5\n")
    with pytest.raises(ConfigError, match="loop.sol_target must be between 0 and 1"):
        load_settings(tmp_path, environ={})


def test_post_init_validation_is_a_config_error(tmp_path):
    write(tmp_path, "kforge.toml", "[harness]\ntrials = 0\n")
    with pytest.raises(ConfigError, match="harness.trials must be >= 1"):
        load_settings(tmp_path, environ={})


def test_an_unknown_environment_variable_is_named_in_a_warning_and_ignored(tmp_path, caplog):
    env = {"KFORGE_HARNES__TRIALS": "3", "KFORGE_CUDA_CACHE": "/tmp/x", "KFORGE_BACKENDS__CPU": "1",
           "KFORGE_HARNESS__TRIALS": "4"}
    with caplog.at_level("WARNING", logger="kforge.config"):
        settings = load_settings(tmp_path, environ=env)
        load_settings(tmp_path, environ=env)  # each variable is named once
    assert settings.harness.trials == 4
    warnings = [r.getMessage() for r in caplog.records]
    assert len(warnings) == 3, warnings
    assert "ignoring the environment variable KFORGE_HARNES__TRIALS: no setting is called 'harnes.trials'" \
        in warnings
    assert any("KFORGE_CUDA_CACHE" in w for w in warnings) and any("KFORGE_BACKENDS__CPU" in w for w in warnings)


def test_a_bad_value_in_the_environment_names_its_variable(tmp_path):
    with pytest.raises(ConfigError, match="^environment variable KFORGE_HARNESS__TRIALS: harness.trials must be an "
                                          "integer"):
        load_settings(tmp_path, environ={"KFORGE_HARNESS__TRIALS": "lots"})
    with pytest.raises(ConfigError, match="^environment variable KFORGE_HARNESS__TRIALS: harness.trials must be >= 1"):
        load_settings(tmp_path, environ={"KFORGE_LLM__MODEL": "ollama:m", "KFORGE_HARNESS__TRIALS": "-3"})


def test_environment_lists_and_plugins_variable(tmp_path):
    env = {"KFORGE_HARNESS__BASELINES": "eager", "KFORGE_PLUGINS": "cpu"}
    assert load_settings(tmp_path, environ=env).harness.baselines == ("eager",)


def test_internal_fields_cannot_be_set(tmp_path):
    write(tmp_path, "kforge.toml", 'sources = ["x"]\n')
    with pytest.raises(ConfigError, match="unknown key 'sources'"):
        load_settings(tmp_path, environ={})


def test_explicit_config_file(tmp_path):
    path = write(tmp_path, "elsewhere.toml", 'backend = "xpu"\n')
    assert load_settings(tmp_path, environ={}, config_file=path).backend == "xpu"
    with pytest.raises(ConfigError, match="config file not found"):
        load_settings(tmp_path, environ={}, config_file=tmp_path / "missing.toml")


def test_invalid_toml_names_the_file(tmp_path):
    path = write(tmp_path, "kforge.toml", "backend = \n")
    with pytest.raises(ConfigError, match=rf"^{path}: not valid TOML"):
        load_settings(tmp_path, environ={})


@dataclass(frozen=True)
class ToyOptions:
    arch: str = "sm_90"
    threads: int = 128

    def __post_init__(self):
        if self.threads % 32:
            raise ValueError("threads must be a multiple of 32")


TOY = Backend(name="toy", programming_model="Toy", device="cpu", options_type=ToyOptions)


def test_backend_options_table_becomes_the_backends_dataclass(tmp_path):
    write(tmp_path, "kforge.toml", '[backends.toy]\narch = "sm_100"\n')
    settings = load_settings(tmp_path, environ={"KFORGE_BACKENDS__TOY__THREADS": "256"})
    assert settings.backend_options(TOY) == ToyOptions(arch="sm_100", threads=256)


def test_backend_options_errors_name_the_key(tmp_path):
    write(tmp_path, "kforge.toml", "[backends.toy]\narchitecture = 1\n")
    with pytest.raises(ConfigError, match="unknown key 'backends.toy.architecture'"):
        load_settings(tmp_path, environ={}).backend_options(TOY)
    write(tmp_path, "kforge.toml", "[backends.toy]\nthreads = 100\n")
    with pytest.raises(ConfigError, match="threads must be a multiple of 32"):
        load_settings(tmp_path, environ={}).backend_options(TOY)
