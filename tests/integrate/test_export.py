"""kforge export: the package's layout and metadata, loading it through ``kernels`` itself, and the kernels the
format refuses."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
import torch

from kforge_core.errors import KForgeError
from kforge_core.export import accepted_kernels, prepare, write_package
from kforge_core.export.kinds import package_variant
from kforge_core.export.model_new import read_model_new

from .conftest import BENCH_ID, accepted, device_of

kernels = pytest.importorskip("kernels")

TRITON_SOURCE = '''
import torch, triton
import triton.language as tl

class ModelNew(torch.nn.Module):
    def forward(self, x, y=None, *, scale: float = 1.0):
        return x
'''


@pytest.fixture(scope="module")
def package(tmp_path_factory: pytest.TempPathFactory) -> Path:
    exported, refused = prepare([accepted("norm/2_rmsnorm"), accepted("norm/1_layernorm"),
                                 accepted("elementwise/2_gelu", "numba")], device_of)
    out = tmp_path_factory.mktemp("export") / "pkg"
    write_package(out, "kforge-test", exported, refused)
    return out


def test_layout_metadata_and_card(package: Path) -> None:
    variant = package / "build" / "torch-universal"
    assert {p.name for p in (variant / "kforge_test").iterdir()} >= {
        "__init__.py", "layers.py", "_binding.py", "impl_rmsnorm", "impl_layernorm"}
    metadata = json.loads((variant / "metadata.json").read_text())
    assert metadata["name"] == "kforge-test" and metadata["python-depends"] == []
    rmsnorm = metadata["kforge"]["kernels"][0]
    assert rmsnorm["layer"] == "Rmsnorm" and rmsnorm["kind"] == "pytorch" and rmsnorm["problem"] == "norm/2_rmsnorm"
    assert rmsnorm["needs"] == {"weight": "parameter", "eps": "value"}
    assert rmsnorm["verdict"]["best_speedup"] == 1.5 and rmsnorm["verdict"]["timing_method"]["repetitions"] == 20
    assert rmsnorm["precision_contract"]["name"] == "fp32"
    card = (package / "README.md").read_text()
    assert "1.50x vs eager" in card and "float32 outputs within atol=0.0001" in card
    assert "elementwise/2_gelu: a numba kernel: imports numba, numpy" in card  # refused, with the reason


def test_loaded_through_kernels_and_swapped(package: Path) -> None:
    from examples.models.tiny_block import RMSNorm

    loaded = kernels.get_local_kernel(package)
    norm = RMSNorm(16)
    with torch.no_grad():
        norm.weight.uniform_(0.5, 1.5)
        x = torch.randn(4, 16)
        expected = norm(x)
        norm.forward = loaded.layers.Rmsnorm.forward.__get__(norm)
        torch.testing.assert_close(norm(x), expected)
        layer_norm = torch.nn.LayerNorm(16)  # ModelNew's self.norm is the replaced LayerNorm itself
        expected = layer_norm(x)
        layer_norm.forward = loaded.layers.Layernorm.forward.__get__(layer_norm)
        torch.testing.assert_close(layer_norm(x), expected)


def test_kernelize_accepts_the_layers(package: Path) -> None:
    """kernels checks that a layer is stateless and that its forward matches the one it replaces."""
    from examples.models.tiny_block import RMSNorm

    class Norm(RMSNorm):
        pass

    kernels.replace_kernel_forward_from_hub(Norm, "KForgeTestNorm")
    norm = Norm(8)
    mapping = {"KForgeTestNorm": {"cpu": kernels.LocalLayerRepository(repo_path=package, layer_name="Rmsnorm")}}
    with kernels.use_kernel_mapping(mapping):
        kernels.kernelize(norm, mode=kernels.Mode.INFERENCE, device="cpu")
    assert norm.forward.__func__.__qualname__ == "Rmsnorm.forward"


def test_numba_alone_is_refused(tmp_path: Path) -> None:
    exported, refused = prepare([accepted("norm/2_rmsnorm", "numba")], device_of)
    assert exported == [] and "numba" in refused[0].reason
    with pytest.raises(KForgeError, match="nothing to export: norm/2_rmsnorm: a numba kernel"):
        write_package(tmp_path, "x", exported, refused)


def test_many_refused_kernels_give_their_reason_once_then_the_problems(tmp_path: Path) -> None:
    problems = ["elementwise/2_gelu", "elementwise/6_softplus", "norm/2_rmsnorm", "reduction/1_row_sum"] * 8
    exported, refused = prepare([accepted(p, "numba") for p in problems], device_of)
    with pytest.raises(KForgeError) as raised:
        write_package(tmp_path, "x", exported, refused)
    message = str(raised.value)
    assert message.count("which a kernels package cannot depend on") == 1 and len(message) < 400, message
    assert message.startswith("nothing to export: a numba kernel: imports numba")
    assert message.endswith("(elementwise/2_gelu, elementwise/6_softplus, norm/2_rmsnorm, reduction/1_row_sum, "
                            "elementwise/2_gelu, elementwise/6_softplus, norm/2_rmsnorm, reduction/1_row_sum "
                            "and 24 more)")


def test_a_refusal_is_json_when_asked(tmp_path: Path) -> None:
    from click.testing import CliRunner

    from kforge_core.app import App
    from kforge_core.cli import cli

    runs = _numba_bench(tmp_path / "runs")
    result = CliRunner().invoke(cli, ["export", BENCH_ID, "--out", str(tmp_path / "out"), "--runs-dir", str(runs),
                                      "--json"], obj=App())
    assert result.exit_code == 1
    assert result.stderr.startswith("Error: nothing to export: a numba kernel: imports numba"), result.stderr
    document = json.loads(result.stdout)
    assert document["kernels"] == [] and [r["problem"] for r in document["refused"]] == ["elementwise/2_gelu",
                                                                                        "norm/2_rmsnorm"]
    assert all("numba" in r["reason"] for r in document["refused"])


def _numba_bench(runs: Path) -> Path:
    """A finished bench of two basics problems whose Numba solutions were correct and timed."""
    from kforge_core.bench.plan import BenchPlan
    from kforge_core.bench.results import ProblemResult
    from kforge_core.codec import to_json
    from kforge_core.records import Candidate
    from kforge_core.settings import Settings
    from kforge_core.store.bench_store import BenchStore

    from .conftest import BASICS

    solutions = BASICS / "solutions" / "numba"
    plan = BenchPlan(BASICS / "problems", ("*2_gelu", "*2_rmsnorm"), "cpu", solutions, "model_new.py", True,
                     Settings(), ())
    with BenchStore(runs) as store:
        store.create_bench(BENCH_ID, suite_path=str(plan.suite), backend="cpu", source=plan.source,
                           config=plan.to_json())
        for key in ("elementwise/2_gelu", "norm/2_rmsnorm"):
            digest = Candidate.from_path(solutions / f"{key}.py").digest
            store.problem_done(BENCH_ID, key, to_json(ProblemResult(key, True, None, runtime_ms=1.0,
                                                                    speedups=(("eager", 1.1),),
                                                                    candidate_digest=digest)))
        store.finish_bench(BENCH_ID, "finished")
    return runs


def test_triton_kernel_gets_the_noarch_variant_of_its_device() -> None:
    shape = read_model_new(TRITON_SOURCE, "t")
    assert (shape.parameters, shape.arguments, shape.arity) == ("x, y=None, *, scale=1.0", "x, y, scale=scale", 4)
    kernel = accepted("norm/2_rmsnorm", backend="triton")
    kernel = type(kernel)(**{**kernel.__dict__, "candidate": kernel.candidate.__class__.from_source(TRITON_SOURCE)})
    exported, _ = prepare([kernel], device_of)
    assert (exported[0].kind.kind, exported[0].kind.variant) == ("triton", "torch-cuda")
    assert package_variant(["torch-universal", "torch-cuda"]) == "torch-cuda"
    with pytest.raises(ValueError, match="different build variants"):
        package_variant(["torch-cuda", "torch-xpu"])


def test_without_kernels_export_names_the_extra(runs_dir: Path, tmp_path: Path,
                                                monkeypatch: pytest.MonkeyPatch) -> None:
    from click.testing import CliRunner

    from kforge_core.app import App
    from kforge_core.cli import cli
    from kforge_core.commands import export as export_command

    monkeypatch.setattr(export_command.importlib.util, "find_spec", lambda name: None)
    result = CliRunner().invoke(cli, ["export", "x", "--out", str(tmp_path), "--runs-dir", str(runs_dir)],
                                obj=App(load_plugins=False))
    assert result.exit_code == 1 and "pip install 'kforge-core[export]'" in result.output


def test_shipped_gpu_examples_are_classified() -> None:
    """CuTe DSL declares its listed dependency; a CUDA C++ candidate built by KForge's own runtime is refused."""
    from kforge_core.export.kinds import kernel_kind

    repo = Path(__file__).resolve().parents[2]
    for path, kind, variant, refused in (
            ("plugins/kforge_cute/kforge_cute/examples/cute_solution.py", "cute", "torch-cuda", ""),
            ("kforge_core/languages/triton/example/solution.py", "triton", "torch-cuda", ""),
            ("plugins/kforge_cuda/kforge_cuda/examples/cuda_solution.py", "cuda-cpp", "", "kforge_cuda")):
        source = (repo / path).read_text()
        found = kernel_kind(read_model_new(source, path), source, "cuda")
        assert (found.kind, found.variant) == (kind, variant) and refused in found.refused
        assert found.python_depends == (("nvidia-cutlass-dsl",) if kind == "cute" else ())


def test_a_bench_gives_its_correct_problems_with_their_verdicts(bench_runs_dir: Path) -> None:
    [gelu] = accepted_kernels(bench_runs_dir, BENCH_ID)
    assert (gelu.problem, gelu.bench_id, gelu.run_id, gelu.best_speedup) == ("elementwise/2_gelu", BENCH_ID, None, 0.8)
    assert gelu.timing is not None and gelu.timing["repetitions"] == 20
    assert gelu.tolerances == (("float32", 1e-4, 1e-4),)
