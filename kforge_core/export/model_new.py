"""What an accepted candidate's ``ModelNew`` asks of the module it would replace, read from its source without
running it (candidate code runs only in workers): ``forward``'s parameters, the attributes ``forward`` reads and
what ``__init__`` made them, and the modules the candidate imports."""

from __future__ import annotations

import ast
import copy
from dataclasses import dataclass

from ..errors import KForgeError


@dataclass(frozen=True)
class ModelNewShape:
    """:param parameters: ``forward``'s parameter list without ``self``, as a ``def`` writes it ("x, residual").
    :param arguments: the same parameters as a call passes them on ("x, residual").
    :param arity: how many parameters ``forward`` has, ``self`` included (what ``kernels`` compares).
    :param needs: ``(attribute, kind)`` for each attribute of ``self`` that forward (or a method it calls) reads;
        kind is ``module:<Class>``, ``parameter``, ``buffer`` or ``value``.
    :param imports: the top-level modules the file imports (``torch``, ``triton``, ``numba``).
    """

    parameters: str
    arguments: str
    arity: int
    needs: tuple[tuple[str, str], ...]
    imports: tuple[str, ...]


def read_model_new(source: str, where: str) -> ModelNewShape:
    """The shape of the ``ModelNew`` defined in ``source``; a KForgeError naming ``where`` when there is none."""
    try:
        tree = ast.parse(source)
    except SyntaxError as exc:
        raise KForgeError(f"{where}: the accepted candidate does not parse ({exc})") from None
    cls = next((node for node in tree.body if isinstance(node, ast.ClassDef) and node.name == "ModelNew"), None)
    if cls is None:
        raise KForgeError(f"{where}: the accepted candidate defines no top-level class ModelNew")
    methods = {node.name: node for node in cls.body if isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef))}
    forward = methods.get("forward")
    if forward is None:
        raise KForgeError(f"{where}: ModelNew has no forward")
    parameters, arguments, arity = _signature(forward.args)
    kinds = _attribute_kinds(methods.get("__init__"))
    used = _attributes_read(forward, methods)
    needs = tuple((name, kinds.get(name, "value")) for name in used if name not in methods)
    return ModelNewShape(parameters, arguments, arity, needs, _imports(tree))


def _signature(args: ast.arguments) -> tuple[str, str, int]:
    stripped = copy.deepcopy(args)
    for arg in (*stripped.posonlyargs, *stripped.args, *stripped.kwonlyargs, stripped.vararg, stripped.kwarg):
        if arg is not None:
            arg.annotation = None
    if stripped.posonlyargs:
        stripped.posonlyargs = stripped.posonlyargs[1:]
    else:
        stripped.args = stripped.args[1:]
    call = [a.arg for a in (*stripped.posonlyargs, *stripped.args)]
    if stripped.vararg is not None:
        call.append(f"*{stripped.vararg.arg}")
    call += [f"{a.arg}={a.arg}" for a in stripped.kwonlyargs]
    if stripped.kwarg is not None:
        call.append(f"**{stripped.kwarg.arg}")
    arity = 1 + len(call)
    return ast.unparse(stripped), ", ".join(call), arity


def _attribute_kinds(init: ast.AST | None) -> dict[str, str]:
    """What ``__init__`` made each ``self.<name>``."""
    kinds: dict[str, str] = {}
    if init is None:
        return kinds
    for node in ast.walk(init):
        if isinstance(node, ast.Assign):
            for target in node.targets:
                if _is_self_attribute(target):
                    kinds[target.attr] = _kind_of(node.value)  # type: ignore[attr-defined]
        elif isinstance(node, ast.AnnAssign) and _is_self_attribute(node.target) and node.value is not None:
            kinds[node.target.attr] = _kind_of(node.value)  # type: ignore[attr-defined]
        elif (isinstance(node, ast.Call) and isinstance(node.func, ast.Attribute)
              and node.func.attr == "register_buffer" and node.args and isinstance(node.args[0], ast.Constant)):
            kinds[str(node.args[0].value)] = "buffer"
    return kinds


def _kind_of(value: ast.expr) -> str:
    if isinstance(value, ast.Call):
        name = _callee_name(value.func)
        if name == "Parameter":
            return "parameter"
        if name[:1].isupper():
            return f"module:{name}"
    return "value"


def _callee_name(func: ast.expr) -> str:
    if isinstance(func, ast.Attribute):
        return func.attr
    if isinstance(func, ast.Name):
        return func.id
    return ""


def _attributes_read(forward: ast.AST, methods: dict[str, ast.AST]) -> list[str]:
    """``self.<name>`` read by forward and by the methods of ModelNew it calls, in order of first use."""
    seen: list[str] = []
    pending, visited = [forward], set()
    while pending:
        node = pending.pop(0)
        if id(node) in visited:
            continue
        visited.add(id(node))
        for sub in ast.walk(node):
            if _is_self_attribute(sub) and isinstance(sub.ctx, ast.Load):  # type: ignore[attr-defined]
                name = sub.attr  # type: ignore[attr-defined]
                if name not in seen:
                    seen.append(name)
                if name in methods:
                    pending.append(methods[name])
    return seen


def _is_self_attribute(node: ast.AST) -> bool:
    return isinstance(node, ast.Attribute) and isinstance(node.value, ast.Name) and node.value.id == "self"


def _imports(tree: ast.Module) -> tuple[str, ...]:
    names: list[str] = []
    for node in ast.walk(tree):
        if isinstance(node, ast.Import):
            names += [alias.name.split(".")[0] for alias in node.names]
        elif isinstance(node, ast.ImportFrom) and node.level == 0 and node.module:
            names.append(node.module.split(".")[0])
    return tuple(dict.fromkeys(names))
