"""A problem as the index sees it: its name, its operators (read from the source and traced), its inputs.

Tracing runs the problem's ``Model`` once on PyTorch's meta device: the operators are dispatched and recorded,
but no arithmetic is done and no memory is filled, so a large problem costs a few milliseconds. A problem that
cannot run on the meta device (it makes tensors on a named device, or reads values) is described from its source
alone.
"""

from __future__ import annotations

import hashlib
import re
import sys
from dataclasses import dataclass
from pathlib import Path

from .operators import ARITHMETIC, HEAVY_FAMILIES, family, source_operators, traced_operators, with_families


@dataclass(frozen=True)
class ProblemSketch:
    """What a problem computes.

    :param name: the problem file's stem (``19_ConvTranspose2d_GELU_GroupNorm``).
    :param digest: hash of its source (as :attr:`kforge_core.records.Problem.digest`).
    :param operators: normalised operator names its source names, first appearance first.
    :param traced: normalised names of the ATen operators one forward ran (empty when it could not be traced).
    :param inputs: each input as ``float32[128, 3, 32, 32]``.
    """

    name: str
    digest: str
    operators: tuple[str, ...]
    traced: tuple[str, ...] = ()
    inputs: tuple[str, ...] = ()

    @property
    def main_operator(self) -> str | None:
        """The first GEMM, convolution or transposed convolution if there is one, else the first operator that is
        not arithmetic (``+``, ``*``, ...), else the first operator."""
        heavy = [op for op in self.operators if family(op) in HEAVY_FAMILIES]
        named = [op for op in self.operators if op not in ARITHMETIC]
        return (heavy or named or list(self.operators) or list(self.traced) or [None])[0]

    @property
    def dtypes(self) -> tuple[str, ...]:
        return tuple(dict.fromkeys(spec.split("[")[0] for spec in self.inputs))

    def words(self) -> str:
        """The text BM25 ranks on: operators (the main one twice), their families, name words and dtypes."""
        ops = with_families((*self.operators, *self.traced))
        main = (self.main_operator,) if self.main_operator else ()
        name_words = [w.lower() for w in re.split(r"[^A-Za-z0-9]+|_", self.name) if w and not w.isdigit()]
        return " ".join((*main, *ops, *name_words, *self.dtypes))


def digest_of(source: str) -> str:
    return hashlib.sha256(source.encode()).hexdigest()[:16]


def sketch_source(name: str, source: str) -> ProblemSketch:
    """A sketch from the source alone (no code is run)."""
    return ProblemSketch(name, digest_of(source), source_operators(source))


def sketch_problem(path: Path) -> ProblemSketch:
    """A sketch of the problem file ``path``, traced on the meta device when it can be."""
    from ..errors import KForgeError

    path = Path(path)
    try:
        source = path.read_text()
    except OSError as exc:
        raise KForgeError(f"cannot read the problem file {path}: {exc.strerror}") from None
    sketch = sketch_source(path.stem, source)
    traced, inputs = _trace_on_meta(path)
    return ProblemSketch(sketch.name, sketch.digest, sketch.operators, traced_operators(traced), inputs)


def _trace_on_meta(path: Path) -> tuple[list[str], tuple[str, ...]]:
    import torch

    from ..harness.op_trace import trace_ops
    from ..problem import import_problem_module

    name = f"kforge_sketch_{abs(hash(str(path)))}"
    try:
        module = import_problem_module(path, module_name=name)
        with torch.device("meta"), torch.no_grad():
            model = module.Model(*module.get_init_inputs())
            inputs = list(module.get_inputs())
            _, names = trace_ops(lambda: model(*inputs))
    except Exception:  # the problem's own code, run where it was not written to run: describe it from source
        return [], ()
    finally:
        sys.modules.pop(name, None)
    tensors = [x for x in inputs if isinstance(x, torch.Tensor)]
    shapes = tuple(f"{str(x.dtype).replace('torch.', '')}{list(x.shape)}" for x in tensors)
    return names, shapes
