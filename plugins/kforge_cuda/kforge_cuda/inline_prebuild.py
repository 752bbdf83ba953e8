"""Building a candidate's ``load_inline`` extensions ahead, from its sources alone (part of ``kforge_prebuild``).

The candidate is read, never imported: a ``torch.utils.cpp_extension.load_inline(...)`` call whose every argument is a
literal (strings, lists of strings, numbers, booleans) or a name bound once to one (in the function that makes the call,
as KernelBench-style solutions do in ``ModelNew.__init__``, at module level, or as a ``self.NAME`` attribute) is built
in the process that builds ahead, through the same content-addressed wrapper the compile stage puts in front of
``load_inline`` (:mod:`kforge_core.languages.cuda_cpp.inline_cache`): same arguments, same key, same build directory.
The compile stage then loads the extension from the cache, or fails at once, from the cache, where the build failed. A
call with an argument made at run time is left to the compile stage, unless that argument is only its build directory or
verbosity, which the cache ignores (it places the build by its content).
"""

from __future__ import annotations

import ast
import inspect
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Callable

from kforge_core.languages.cuda_cpp.build_cache import BuildOutcome, CudaBuildError
from kforge_core.languages.cuda_cpp.inline_cache import NOT_IN_KEY, content_addressed
from kforge_core.plugin_api import parsed_python_files
from kforge_core.records import Candidate


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
        for call, constants in _calls_in_scope(tree):
            try:
                args = tuple(_literal(node, constants) for node in call.args)
                kwargs = tuple((k.arg, value) for k in call.keywords if k.arg is not None
                               for value in _argument(k.arg, k.value, constants))
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


def _argument(name: str, node: ast.expr, constants: dict[str, ast.expr]) -> list[Any]:
    """A keyword argument's value as a one-item list; an empty one for an argument the cache ignores (``NOT_IN_KEY``)
    that is made at run time (load_inline's default stands in). ValueError for any other made at run time."""
    try:
        return [_literal(node, constants)]
    except ValueError:
        if name in NOT_IN_KEY and name != "name":
            return []
        raise


def _calls_in_scope(tree: ast.Module) -> list[tuple[ast.Call, dict[str, ast.expr]]]:
    """Each ``load_inline`` call with the names it can see bound once: the module's, the ``self.NAME`` attributes
    of the class it is made in, then the names of each function it is made in (the innermost last, so that it
    wins); a function's parameters hide what they name."""
    found: list[tuple[ast.Call, dict[str, ast.expr]]] = []

    def visit(node: ast.AST, constants: dict[str, ast.expr]) -> None:
        for child in ast.iter_child_nodes(node):
            if isinstance(child, ast.ClassDef):
                visit(child, {**constants, **_attributes_bound_once(child)})
                continue
            if isinstance(child, (ast.FunctionDef, ast.AsyncFunctionDef, ast.Lambda)):
                parameters = {a.arg for a in (*child.args.posonlyargs, *child.args.args, *child.args.kwonlyargs,
                                              *filter(None, (child.args.vararg, child.args.kwarg)))}
                inner = {k: v for k, v in constants.items() if k not in parameters}
                if not isinstance(child, ast.Lambda):
                    inner.update((k, v) for k, v in _bound_once(child.body).items() if k not in parameters)
                visit(child, inner)
                continue
            if isinstance(child, ast.Call) and _called_name(child.func) == "load_inline":
                found.append((child, constants))
            visit(child, constants)

    visit(tree, module_literals(tree))
    return found


def _attributes_bound_once(cls: ast.ClassDef) -> dict[str, ast.expr]:
    """``self.NAME`` attributes assigned exactly once in a class's methods, keyed ``"self.NAME"`` (KernelBench-style
    solutions keep their CUDA source on the module: ``self.cuda_source = '''...'''`` in ``__init__``)."""
    bound: dict[str, list[ast.expr | None]] = {}
    for node in ast.walk(cls):
        targets: list[tuple[ast.expr, ast.expr | None]] = []
        if isinstance(node, ast.Assign):
            targets = [(target, node.value) for target in node.targets]
        elif isinstance(node, (ast.AnnAssign, ast.AugAssign)):
            targets = [(node.target, node.value if isinstance(node, ast.AnnAssign) else None)]
        for target, value in targets:
            for part in ast.walk(target):
                if isinstance(part, ast.Attribute) and isinstance(part.value, ast.Name) and part.value.id == "self":
                    bound.setdefault(f"self.{part.attr}", []).append(value if part is target else None)
    return {name: values[0] for name, values in bound.items() if len(values) == 1 and values[0] is not None}


def module_literals(tree: ast.Module) -> dict[str, ast.expr]:
    """Module-level names bound exactly once (to any expression; :func:`_literal` decides if it is a literal)."""
    return _bound_once(tree.body)


def _bound_once(body: list[ast.stmt]) -> dict[str, ast.expr]:
    """Names bound exactly once by the statements of one scope (blocks inside it included, other functions' and
    classes' bodies not), to the expression they are bound to."""
    bound: dict[str, list[ast.expr | None]] = {}

    def visit(statements: list[ast.stmt]) -> None:
        for node in statements:
            if isinstance(node, ast.Assign):
                for target in node.targets:
                    for name in ast.walk(target):
                        if isinstance(name, ast.Name):
                            bound.setdefault(name.id, []).append(node.value if name is target else None)
            elif isinstance(node, (ast.AnnAssign, ast.AugAssign)) and isinstance(node.target, ast.Name):
                value = node.value if isinstance(node, ast.AnnAssign) else None
                if value is not None or isinstance(node, ast.AugAssign):
                    bound.setdefault(node.target.id, []).append(value)
            elif isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef)):
                bound.setdefault(node.name, []).append(None)
                continue
            for field in ("body", "orelse", "finalbody"):
                visit(getattr(node, field, None) or [])
            for handler in getattr(node, "handlers", ()):
                visit(handler.body)
            for case in getattr(node, "cases", ()):
                visit(case.body)
            for target in _other_targets(node):
                bound.setdefault(target, []).append(None)

    visit(body)
    return {name: values[0] for name, values in bound.items() if len(values) == 1 and values[0] is not None}


def _other_targets(node: ast.stmt) -> list[str]:
    """Names a statement binds other than by assignment: loop variables, ``with ... as``, ``except ... as``,
    imports."""
    names: list[str] = []
    targets: list[ast.expr] = []
    if isinstance(node, (ast.For, ast.AsyncFor)):
        targets.append(node.target)
    elif isinstance(node, (ast.With, ast.AsyncWith)):
        targets.extend(item.optional_vars for item in node.items if item.optional_vars is not None)
    elif isinstance(node, (ast.Import, ast.ImportFrom)):
        names.extend((alias.asname or alias.name).split(".")[0] for alias in node.names)
    for handler in getattr(node, "handlers", ()):
        if handler.name:
            names.append(handler.name)
    names.extend(n.id for t in targets for n in ast.walk(t) if isinstance(n, ast.Name))
    return names


def _literal(node: ast.expr, constants: dict[str, ast.expr], depth: int = 0) -> Any:
    """The value of a literal (or of a module-level name bound to one, or a list of them); ValueError otherwise."""
    if depth > 8:
        raise ValueError("too deep")
    if isinstance(node, ast.Name) and node.id in constants:
        return _literal(constants[node.id], constants, depth + 1)
    if isinstance(node, ast.Attribute) and isinstance(node.value, ast.Name) and f"{node.value.id}.{node.attr}" in \
            constants:  # self.NAME, bound once in the class
        return _literal(constants[f"{node.value.id}.{node.attr}"], constants, depth + 1)
    if isinstance(node, (ast.List, ast.Tuple)):
        values = [_literal(element, constants, depth + 1) for element in node.elts]
        return values if isinstance(node, ast.List) else tuple(values)
    if isinstance(node, ast.BinOp) and isinstance(node.op, ast.Add):  # "a" + B: sources glued together
        return _literal(node.left, constants, depth + 1) + _literal(node.right, constants, depth + 1)
    if isinstance(node, ast.Constant) and isinstance(node.value, (str, int, float, bool, type(None))):
        return node.value
    raise ValueError(f"not a literal: {ast.dump(node)[:60]}")
