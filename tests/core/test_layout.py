"""The layout shows the architecture: dependencies between kforge_core's packages only point one way, the harness's
host side and worker side never import each other, and a few file names are used once."""

from __future__ import annotations

import ast
from collections import Counter
from pathlib import Path

CORE = Path(__file__).resolve().parents[2] / "kforge_core"


def _imports(root: Path) -> dict[str, dict[str, str]]:
    """module -> {imported kforge module -> "file:line"}, every import but those under ``if TYPE_CHECKING``."""
    found: dict[str, dict[str, str]] = {}
    for path in sorted(root.rglob("*.py")):
        parts = list(path.relative_to(root.parent).with_suffix("").parts)
        is_package = parts[-1] == "__init__"
        module = ".".join(parts[:-1] if is_package else parts)
        tree = ast.parse(path.read_text())
        typing_only = {id(n) for block in ast.walk(tree) if isinstance(block, ast.If)
                       and "TYPE_CHECKING" in ast.unparse(block.test) for n in ast.walk(block)}
        targets = found.setdefault(module, {})
        for node in ast.walk(tree):
            if id(node) in typing_only:
                continue
            if isinstance(node, ast.Import):
                names = [alias.name for alias in node.names]
            elif isinstance(node, ast.ImportFrom):
                if node.level:
                    base = module.split(".")[: len(module.split(".")) - node.level + (1 if is_package else 0)]
                    stem = ".".join(base + ([node.module] if node.module else []))
                else:
                    stem = node.module or ""
                names = [stem] + [f"{stem}.{alias.name}" for alias in node.names]
            else:
                continue
            for name in names:
                if name.split(".")[0] == root.name:
                    targets.setdefault(name, f"{path.relative_to(root.parent)}:{node.lineno}")
    return found


def _unit(module: str, root: str, depth: int) -> str:
    """The package (or top-level module) a module belongs to, ``depth`` levels below the root."""
    return ".".join(module.split(".")[: depth + 1])


def package_cycles(root: Path, depth: int = 1) -> list[list[str]]:
    """Cycles among ``root``'s packages and top-level modules (strongly connected components of more than one)."""
    graph: dict[str, set[str]] = {}
    known = set(_imports(root))
    for module, targets in _imports(root).items():
        here = _unit(module, root.name, depth)
        for target in targets:
            while target not in known and "." in target:  # "from pkg import name": the module is pkg
                target = target.rsplit(".", 1)[0]
            there = _unit(target, root.name, depth)
            if there != here and there != root.name and here != root.name:
                graph.setdefault(here, set()).add(there)
    index: dict[str, int] = {}
    low: dict[str, int] = {}
    stack: list[str] = []
    cycles: list[list[str]] = []

    def visit(node: str) -> None:
        index[node] = low[node] = len(index)
        stack.append(node)
        for nxt in sorted(graph.get(node, ())):
            if nxt not in index:
                visit(nxt)
                low[node] = min(low[node], low[nxt])
            elif nxt in stack:
                low[node] = min(low[node], index[nxt])
        if low[node] == index[node]:
            component = []
            while True:
                member = stack.pop()
                component.append(member)
                if member == node:
                    break
            if len(component) > 1:
                cycles.append(sorted(component))

    for node in sorted(graph):
        if node not in index:
            visit(node)
    return cycles


def test_no_import_cycle_between_the_cores_packages():
    assert package_cycles(CORE) == []


def test_the_cycle_finder_finds_a_cycle(tmp_path):
    package = tmp_path / "pkg"
    for name, text in {"__init__.py": "", "a/__init__.py": "", "a/x.py": "from ..b import y\n",
                       "b/__init__.py": "", "b/y.py": "def f():\n    from ..a import x\n",
                       "c.py": "from typing import TYPE_CHECKING\nif TYPE_CHECKING:\n    from .a import x\n"}.items():
        (package / name).parent.mkdir(parents=True, exist_ok=True)
        (package / name).write_text(text)
    assert package_cycles(package) == [["pkg.a", "pkg.b"]]  # a lazy import counts; a typing-only one does not


def test_the_harness_host_and_worker_sides_never_import_each_other():
    imports = _imports(CORE)
    for side, other in (("host", "worker"), ("worker", "host")):
        crossing = {f"{module} -> {target}" for module, targets in imports.items()
                    if module.startswith(f"kforge_core.harness.{side}")
                    for target in targets if target.startswith(f"kforge_core.harness.{other}")}
        assert not crossing, crossing


def test_records_runs_and_backends_are_each_one_file():
    names = Counter(path.name for path in CORE.rglob("*.py"))
    assert {name: names[name] for name in ("records.py", "runs.py", "backends.py")} == {
        "records.py": 1, "runs.py": 1, "backends.py": 1}
