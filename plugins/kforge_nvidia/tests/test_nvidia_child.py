"""The child program a profiler or sanitizer runs knows no language: its command names the language's build routes
and options type as ``module:name``, and it finds both again."""

from pathlib import Path

from kforge_cuda.options import CudaOptions
from kforge_cuda.stages import build_routes as cuda_routes
from kforge_nvidia.child import resolve, child_command, options_from_json
from kforge_triton.backend import TritonOptions
from kforge_triton.stages import build_routes as triton_routes


def _flag(command: list[str], name: str) -> str:
    return command[command.index(name) + 1]


def test_the_command_names_the_routes_and_options_that_built_the_candidate(tmp_path):
    for routes, options in ((cuda_routes, CudaOptions(arch="sm_90a", sanitize=True)),
                            (triton_routes, TritonOptions(warmup_forward=False))):
        command = child_command(workdir=tmp_path, entry="model_new.py", problem=Path("p.py"), cache_root=tmp_path,
                                routes=routes, options=options, mode="sanitize")
        assert command[1:3] == ["-m", "kforge_nvidia.child"]
        assert resolve(_flag(command, "--routes")) is routes
        assert options_from_json(_flag(command, "--options-type"), _flag(command, "--options")) == options
