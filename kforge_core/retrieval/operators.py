"""What a problem computes, as operator names: read from its source, and traced from one forward on the meta device.

Names are normalised so that the module, the functional and the ATen spellings of one operator meet:
``nn.GroupNorm``, ``F.group_norm`` and ``aten::native_group_norm`` all become ``groupnorm``. Each operator also
gets its family (``conv3d`` -> ``conv``, ``addmm`` -> ``gemm``), so related problems share words.
"""

from __future__ import annotations

import ast
import re
from typing import Iterable

from ..harness.op_trace import NON_COMPUTE_OPS

_NON_COMPUTE = {name.replace("_", "") for name in NON_COMPUTE_OPS} | {
    "module", "parameter", "tensor", "randn", "rand", "randint", "manualseed", "nograd", "sequential",
    "modulelist", "super", "init", "forward", "getinputs", "getinitinputs", "float", "double", "half", "bfloat16",
    "shape", "device", "dtype", "cuda", "cpu", "len", "range", "print", "isinstance", "tuple", "list", "int",
}
_ALIASES = {"mm": "matmul", "bmm": "matmul", "convolution": "conv", "addmm": "linear"}
_FAMILIES = (
    (re.compile(r"^convtranspose\dd$|^convtranspose$"), "deconv"),
    (re.compile(r"^conv(\dd)?$|^convolution$"), "conv"),
    (re.compile(r"^(matmul|mm|bmm|addmm|linear|einsum|baddbmm|matvec|mv|bilinear)$"), "gemm"),
    (re.compile(r"norm"), "norm"),
    (re.compile(r"pool"), "pool"),
    (re.compile(r"^(relu|leakyrelu|gelu|silu|sigmoid|tanh|hardtanh|hardswish|hardsigmoid|elu|selu|mish|softplus|"
                r"softsign|swish|relu6|celu|logsigmoid|threshold)$"), "activation"),
    (re.compile(r"softmax"), "softmax"),
    (re.compile(r"^(sum|mean|max|min|amax|amin|prod|logsumexp|argmax|argmin|cumsum|cumprod|var|std|norm)$"),
     "reduction"),
)
HEAVY_FAMILIES = ("gemm", "conv", "deconv")
_BINOPS = {ast.MatMult: "matmul", ast.Add: "add", ast.Sub: "sub", ast.Mult: "mul", ast.Div: "div", ast.Pow: "pow"}
ARITHMETIC = frozenset({"add", "sub", "mul", "div", "pow", "rsub", "neg"})


def canonical(name: str) -> str:
    """``aten::native_group_norm`` -> ``groupnorm``; ``Conv3d`` -> ``conv3d``; ``relu_`` -> ``relu``."""
    base = name.split("::")[-1].split(".")[0].lower().strip("_").replace("_", "")
    base = _ALIASES.get(base, base.removesuffix("withindices"))
    return base[len("native"):] if base.startswith("native") and len(base) > 6 else base


def family(op: str) -> str | None:
    return next((fam for pattern, fam in _FAMILIES if pattern.search(op) and fam != op), None)


def source_operators(source: str) -> tuple[str, ...]:
    """The operators the problem's ``Model`` names, in the order they first appear (layers built in ``__init__``
    come before what ``forward`` calls, as in the file); arithmetic counts too (``@`` is a matmul)."""
    try:
        tree = ast.parse(source)
    except SyntaxError:
        return ()
    model = next((n for n in tree.body if isinstance(n, ast.ClassDef) and n.name == "Model"), tree)
    setup = {id(n) for f in ast.walk(model) if isinstance(f, ast.FunctionDef) and f.name == "__init__"
             for n in ast.walk(f) if isinstance(n, ast.BinOp)}  # arithmetic on sizes and initial values
    found: list[str] = []
    for node in _in_source_order(model):
        op = None if id(node) in setup else _operator_of(node)
        if op and op not in _NON_COMPUTE and op not in found:
            found.append(op)
    return tuple(found)


def _in_source_order(tree: ast.AST) -> list[ast.AST]:
    nodes = [n for n in ast.walk(tree) if hasattr(n, "lineno")]
    return sorted(nodes, key=lambda n: (n.lineno, n.col_offset))


def _operator_of(node: ast.AST) -> str | None:
    if isinstance(node, ast.BinOp) and type(node.op) in _BINOPS:
        return _BINOPS[type(node.op)]
    if not isinstance(node, ast.Call):
        return None
    func = node.func
    if isinstance(func, ast.Attribute):
        root = func.value
        while isinstance(root, ast.Attribute):
            root = root.value
        if isinstance(root, ast.Name) and root.id != "self":  # self.conv(x) is a layer built in __init__
            return canonical(func.attr)  # torch.x(), nn.X(), F.x(), and tensor methods (x.sum())
    return None


def traced_operators(names: Iterable[str]) -> tuple[str, ...]:
    """The traced ATen operators (``aten::convolution``, ...), normalised, first appearance first."""
    found: list[str] = []
    for name in names:
        op = canonical(name)
        if op not in _NON_COMPUTE and op not in found:
            found.append(op)
    return tuple(found)


def with_families(ops: Iterable[str]) -> tuple[str, ...]:
    """``ops`` followed by the families they belong to (each once)."""
    ops = tuple(dict.fromkeys(ops))
    families = [f for f in (family(op) for op in ops) if f]
    return ops + tuple(dict.fromkeys(f for f in families if f not in ops))
