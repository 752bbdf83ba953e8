"""The kernel index's parts without runs: operator names, problem sketches, BM25 ranking, the stored index."""

from __future__ import annotations

import sqlite3

import pytest
from llama_index.core.base.embeddings.base import BaseEmbedding

from kforge_core.errors import KForgeError
from kforge_core.records import SourceFile
from kforge_core.retrieval import IndexedKernel, KernelIndexStore, ProblemSketch, index_path, search, sketch_source
from kforge_core.retrieval.operators import canonical, source_operators

CONV3D_GROUPNORM = '''
import torch
import torch.nn as nn

class Model(nn.Module):
    def __init__(self, c_in, c_out, k, groups):
        super().__init__()
        self.conv = nn.Conv3d(c_in, c_out, k)
        self.norm = nn.GroupNorm(groups, c_out)

    def forward(self, x):
        x = self.conv(x)
        x = self.norm(x)
        return torch.relu(x).view(x.size(0), -1)

N = 2 * 8  # arithmetic outside Model is not the problem's

def get_inputs():
    return [torch.randn(N, 3, 16, 32, 32)]
'''


def kernel(name: str, ops: tuple[str, ...], backend: str = "cuda", digest: str = "") -> IndexedKernel:
    return IndexedKernel(key=f"run:{name}-{backend}", problem=ProblemSketch(name, digest or name, ops),
                         backend=backend, precision="fp32", verdict="correct",
                         files=(SourceFile("k.py", f"# {name}\n"),), entry="k.py", runtime_ms=1.0, speedup=2.0)


def test_the_spellings_of_one_operator_meet():
    assert {canonical(n) for n in ("GroupNorm", "group_norm", "aten::native_group_norm")} == {"groupnorm"}
    assert canonical("aten::relu_") == "relu" and canonical("aten::mm") == "matmul"
    assert canonical("aten::max_pool2d_with_indices") == "maxpool2d"


def test_a_problems_operators_come_from_its_model_in_source_order():
    assert source_operators(CONV3D_GROUPNORM) == ("conv3d", "groupnorm", "relu")
    sketch = sketch_source("conv3d_gn", CONV3D_GROUPNORM)
    assert sketch.main_operator == "conv3d"
    assert sketch.words().split()[:2] == ["conv3d", "conv3d"]  # the main operator counts twice
    assert {"conv", "norm", "activation"} <= set(sketch.words().split())  # the families


def test_a_related_problem_ranks_above_an_unrelated_one_and_unrelated_ones_are_left_out():
    kernels = [kernel("softmax_only", ("softmax",)), kernel("matmul_relu", ("matmul", "relu")),
               kernel("conv3d_groupnorm_mean", ("conv3d", "groupnorm", "mean"))]
    query = sketch_source("new", CONV3D_GROUPNORM)
    hits = search(kernels, query, backend="cuda")
    assert [h.kernel.problem.name for h in hits] == ["conv3d_groupnorm_mean", "matmul_relu"]
    assert hits[0].score > hits[1].score and "groupnorm" in hits[0].shared


def test_the_same_backend_comes_first_and_the_same_problem_before_related_ones():
    query = sketch_source("new", CONV3D_GROUPNORM)
    kernels = [kernel("conv3d_groupnorm", ("conv3d", "groupnorm", "relu"), "metal"),
               kernel("conv3d_only", ("conv3d",), "cuda"),
               kernel("same", ("conv3d", "groupnorm", "relu"), "cuda", digest=query.digest)]
    hits = search(kernels, query, backend="cuda")
    assert [(h.kernel.problem.name, h.kernel.backend, h.same_problem) for h in hits] == [
        ("same", "cuda", True), ("conv3d_only", "cuda", False), ("conv3d_groupnorm", "metal", False)]
    assert [h.kernel.backend for h in search(kernels, query, backend="metal")][0] == "metal"


def test_free_words_are_normalised_like_operators():
    kernels = [kernel("conv3d_groupnorm", ("conv3d", "groupnorm")), kernel("matmul", ("matmul",))]
    assert [h.kernel.problem.name for h in search(kernels, "Conv3d group_norm")] == ["conv3d_groupnorm"]
    assert search(kernels, "") == [] and search([], "conv3d") == []


def test_the_stored_index_round_trips_and_a_damaged_one_says_so(tmp_path):
    with KernelIndexStore(tmp_path) as store:
        store.put([kernel("a", ("matmul",)), kernel("b", ("conv2d",))], "runs")
        store.put([kernel("c", ("gelu",), "metal")], "/published")
        store.drop("runs")
        assert [k.problem.name for k in store.kernels()] == ["c"]
        assert store.kernels()[0] == kernel("c", ("gelu",), "metal")
    with sqlite3.connect(index_path(tmp_path)) as conn:
        conn.execute("UPDATE kernels SET record = '{\"key\": 1}'")
    with KernelIndexStore(tmp_path) as store, pytest.raises(KForgeError, match="is damaged"):
        store.kernels()
    index_path(tmp_path).write_bytes(b"\0garbage" * 512)
    with pytest.raises(KForgeError, match="is damaged.*\n  hint: delete it"):
        KernelIndexStore(tmp_path)


class WordCountEmbedding(BaseEmbedding):
    """An embedding model whose second dimension counts ``word``: a test can say which kernel it finds closest."""

    word: str

    def _vector(self, text: str) -> list[float]:
        return [1.0, 10.0 * text.split().count(self.word)]

    def _get_text_embedding(self, text: str) -> list[float]:
        return self._vector(text)

    def _get_query_embedding(self, query: str) -> list[float]:
        return self._vector(query)

    async def _aget_query_embedding(self, query: str) -> list[float]:
        return self._vector(query)


def test_a_configured_embedding_model_re_ranks_what_bm25_found():
    kernels = [kernel("conv3d_groupnorm_mean", ("conv3d", "groupnorm", "mean")), kernel("relu_only", ("relu",)),
               kernel("softmax_only", ("softmax",))]
    query = sketch_source("new", CONV3D_GROUPNORM)
    assert [h.kernel.problem.name for h in search(kernels, query)] == ["conv3d_groupnorm_mean", "relu_only"]
    reranked = search(kernels, query, embed=WordCountEmbedding(word="relu"))
    assert [h.kernel.problem.name for h in reranked] == ["relu_only", "conv3d_groupnorm_mean"]  # softmax: still out


def test_an_embedding_model_is_named_provider_colon_model():
    from kforge_core.retrieval.embedding import embedding_model

    for spec in ("nope:x", "openai", "ollama:"):
        with pytest.raises(KForgeError, match="is not PROVIDER:MODEL"):
            embedding_model(spec)
