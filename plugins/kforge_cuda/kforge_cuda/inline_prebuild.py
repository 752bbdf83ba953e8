"""Building a candidate's ``load_inline`` extensions ahead, from its sources alone (part of ``kforge_prebuild``).

The candidate is read, never imported: a ``torch.utils.cpp_extension.load_inline(...)`` call whose every argument
is a literal (strings, lists of strings, numbers, booleans) or a module-level name bound once to one is built in the
process that builds ahead, through the same content-addressed wrapper the compile stage puts in front of
``load_inline`` (:mod:`kforge_core.languages.cuda_cpp.inline_cache`): same arguments, same key, same build directory. The compile stage
then loads the extension from the cache, or fails at once, from the cache, where the build failed. A call with an
argument made at run time is left to the compile stage.
"""

from __future__ import annotations

import ast
import inspect
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Callable

from kforge_core.candidate_source import parsed_python_files
from kforge_core.records import Candidate

from kforge_core.languages.cuda_cpp.build_cache import BuildOutcome, CudaBuildError
from kforge_core.languages.cuda_cpp.inline_cache import content_addressed


@dataclass(frozen=True)
class InlineCall:
    """One ``load_inline`` call read statically: its arguments as the candidate passes them, and where it is."""

    args: tuple[Any, ...]
    kwargs: tuple[tuple[str, Any], ...]
    where: str  # file:line

    @property
    def name(self) -> str:
        return str(dict(self.kwargs).get("name", self.args[0] if self.args else "extension"))


def find_inline_calls(candidate: Candidate) -> list[InlineCall]:
    """Each ``load_inline`` call of the candidate whose arguments can all be read statically."""
    found: list[InlineCall] = []
    for file, tree in parsed_python_files(candidate):
        constants = module_literals(tree)
        for call in ast.walk(tree):
            if not (isinstance(call, ast.Call) and _called_name(call.func) == "load_inline"):
                continue
            try:
                args = tuple(_literal(node, constants) for node in call.args)
                kwargs = tuple((k.arg, _literal(k.value, constants)) for k in call.keywords if k.arg is not None)
            except ValueError:
                continue  # an argument made at run time: the compile stage builds it
            if any(k.arg is None for k in call.keywords):
                continue  # **options
            inline = InlineCall(args, kwargs, f"{file.name}:{call.lineno}")
            if inline not in found:
                found.append(inline)
    return found


def build_inline(call: InlineCall, cache_root: Path, toolchain: str,
                 load_inline: Callable[..., Any] | None = None) -> BuildOutcome | CudaBuildError:
    """Build ``call`` into the compile stage's cache (``cache_root``, keyed as the compile stage keys it); what the
    build did, or its error."""
    if load_inline is None:
        from torch.utils.cpp_extension import load_inline
    recorded: list[BuildOutcome | CudaBuildError] = []
    wrapped = content_addressed(load_inline, cache_root, toolchain, recorded.append)
    try:
        inspect.signature(load_inline).bind(*call.args, **dict(call.kwargs))
    except TypeError as exc:
        return CudaBuildError(call.name, f"{call.where}: load_inline{exc}")
    try:
        wrapped(*call.args, **dict(call.kwargs))
    except RuntimeError:
        pass  # recorded (and cached as a failure: the compile stage fails at once, as PyTorch would)
    return recorded[-1] if recorded else CudaBuildError(call.name, f"{call.where}: load_inline did not build")


def _called_name(func: ast.expr) -> str | None:
    if isinstance(func, ast.Name):
        return func.id
    if isinstance(func, ast.Attribute):
        return func.attr
    return None


def module_literals(tree: ast.Module) -> dict[str, ast.expr]:
    """Module-level names bound exactly once (to any expression; :func:`_literal` decides if it is a literal)."""
    bound: dict[str, list[ast.expr]] = {}
    for node in tree.body:
        if isinstance(node, ast.Assign):
            for target in node.targets:
                if isinstance(target, ast.Name):
                    bound.setdefault(target.id, []).append(node.value)
        elif isinstance(node, ast.AnnAssign) and isinstance(node.target, ast.Name) and node.value is not None:
            bound.setdefault(node.target.id, []).append(node.value)
    return {name: values[0] for name, values in bound.items() if len(values) == 1}


def _literal(node: ast.expr, constants: dict[str, ast.expr], depth: int = 0) -> Any:
    """The value of a literal (or of a module-level name bound to one, or a list of them); ValueError otherwise."""
    if depth > 8:
        raise ValueError("too deep")
    if isinstance(node, ast.Name) and node.id in constants:
        return _literal(constants[node.id], constants, depth + 1)
    if isinstance(node, (ast.List, ast.Tuple)):
        values = [_literal(element, constants, depth + 1) for element in node.elts]
        return values if isinstance(node, ast.List) else tuple(values)
    if isinstance(node, ast.BinOp) and isinstance(node.op, ast.Add):  # "a" + B: sources glued together
        return _literal(node.left, constants, depth + 1) + _literal(node.right, constants, depth + 1)
    if isinstance(node, ast.Constant) and isinstance(node.value, (str, int, float, bool, type(None))):
        return node.value
    raise ValueError(f"not a literal: {ast.dump(node)[:60]}")
