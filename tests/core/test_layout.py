"""The layout shows the architecture: dependencies between kforge_core's packages, and between the modules of the
core and of every plugin, only point one way; the harness's host side and worker side never import each other, nor
does the protocol import the host side; the core tests no device by name; a few file names are used once; and
the benchmarks import only what the core has."""

from __future__ import annotations

import ast
import functools
import re
from collections import Counter
from pathlib import Path

REPO = Path(__file__).resolve().parents[2]
CORE = REPO / "kforge_core"
PLUGIN_PACKAGES = sorted(p for p in (REPO / "plugins").glob("kforge_*/kforge_*") if (p / "__init__.py").is_file())


@functools.cache
def _imports(root: Path) -> dict[str, dict[str, str]]:
    """module -> {imported kforge module -> "file:line"}, every import but those under ``if TYPE_CHECKING``; a root's
    files are parsed once, and the tests only read what they give."""
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
                names = [f"{stem}.{alias.name}" for alias in node.names]  # a module, or a name in one
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
    """Cycles among ``root``'s packages and top-level modules (strongly connected components of more than one);
    with a large ``depth``, among all its modules."""
    graph: dict[str, set[str]] = {}
    imports = _imports(root)
    known = set(imports)
    for module, targets in imports.items():
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


def test_no_import_cycle_between_the_cores_modules():
    assert package_cycles(CORE, depth=99) == []


def test_no_import_cycle_between_a_plugins_modules():
    assert PLUGIN_PACKAGES, "no plugin found under plugins/"
    assert {p.name: package_cycles(p, depth=99) for p in PLUGIN_PACKAGES} == {p.name: [] for p in PLUGIN_PACKAGES}


# A test of a device's name: ``device == "cpu"``, ``"cuda" in ...``, ``.startswith("cuda")``.
_DEVICE_NAME_TEST = re.compile(r"""(==|!=|\bin)\s*[(\[{]?\s*["'](cpu|cuda|xpu|mps)["']"""
                               r"""|["'](cpu|cuda|xpu|mps)["']\s*(==|!=|\bin\b)|startswith\(["'](cpu|cuda|xpu|mps)""")


def device_name_tests(root: Path) -> list[str]:
    return [f"{path.relative_to(root.parent)}:{number}: {line.strip()}" for path in sorted(root.rglob("*.py"))
            for number, line in enumerate(path.read_text().splitlines(), 1) if _DEVICE_NAME_TEST.search(line)]


def test_the_core_tests_no_device_by_its_name():
    """What differs between devices is asked of the device class (``Device.host_cpu``, ``torch_type``, ...)."""
    assert device_name_tests(CORE) == []


def test_the_device_name_finder_finds_one(tmp_path):
    (tmp_path / "pkg").mkdir()
    (tmp_path / "pkg" / "a.py").write_text('gpus = backend.device != "cpu"\nok = device.host_cpu\n')
    assert device_name_tests(tmp_path / "pkg") == ['pkg/a.py:1: gpus = backend.device != "cpu"']


def test_the_cycle_finder_finds_a_cycle(tmp_path):
    package = tmp_path / "pkg"
    for name, text in {"__init__.py": "", "a/__init__.py": "", "a/x.py": "from ..b import y\n",
                       "b/__init__.py": "", "b/y.py": "def f():\n    from ..a import x\n",
                       "c.py": "from typing import TYPE_CHECKING\nif TYPE_CHECKING:\n    from .a import x\n"}.items():
        (package / name).parent.mkdir(parents=True, exist_ok=True)
        (package / name).write_text(text)
    assert package_cycles(package) == [["pkg.a", "pkg.b"]]  # a lazy import counts; a typing-only one does not
    assert package_cycles(package, depth=99) == [["pkg.a.x", "pkg.b.y"]]


def test_the_harness_host_and_worker_sides_never_import_each_other():
    imports = _imports(CORE)
    for side, other in (("host", "worker"), ("worker", "host")):
        crossing = {f"{module} -> {target}" for module, targets in imports.items()
                    if module.startswith(f"kforge_core.harness.{side}")
                    for target in targets if target.startswith(f"kforge_core.harness.{other}")}
        assert not crossing, crossing


def host_imports_of_the_worker_side(root: Path) -> list[str]:
    """Each import of ``harness.host`` by a module under ``harness/worker/`` or by ``harness/protocol.py``, lazy ones
    inside functions among them, as ``file:line: module``."""
    harness = f"{root.name}.harness"
    host = f"{harness}.host"
    worker_side = {module: targets for module, targets in _imports(root).items()
                   if module == f"{harness}.protocol" or module.startswith(f"{harness}.worker")}
    return sorted(f"{where}: {target}" for targets in worker_side.values() for target, where in targets.items()
                  if target == host or target.startswith(f"{host}."))


def test_the_worker_side_and_the_protocol_import_nothing_of_the_host():
    """A worker loads ``harness/worker/`` and the messages it reads (``protocol``): neither reaches into the KForge
    process's side, so what a worker runs is what those two name (the sandbox plan they share lies beside them)."""
    assert host_imports_of_the_worker_side(CORE) == []


def test_the_host_import_finder_finds_each_way_in(tmp_path):
    package = tmp_path / "kforge_core"
    for name, text in {"__init__.py": "", "harness/__init__.py": "", "harness/host/__init__.py": "",
                       "harness/host/namespaces.py": "", "harness/hostile.py": "",
                       "harness/protocol.py": "from .host.namespaces import SandboxPlan\nfrom . import hostile\n",
                       "harness/worker/__init__.py": "",
                       "harness/worker/w.py":
                           "import kforge_core.harness.host\ndef f():\n    from ..host import namespaces\n",
                       "harness/elsewhere.py": "from .host import namespaces\n"}.items():
        (package / name).parent.mkdir(parents=True, exist_ok=True)
        (package / name).write_text(text)
    assert host_imports_of_the_worker_side(package) == [
        "kforge_core/harness/protocol.py:1: kforge_core.harness.host.namespaces.SandboxPlan",
        "kforge_core/harness/worker/w.py:1: kforge_core.harness.host",
        "kforge_core/harness/worker/w.py:3: kforge_core.harness.host.namespaces"]


def test_records_runs_and_backends_are_each_one_file():
    names = Counter(path.name for path in CORE.rglob("*.py"))
    assert {name: names[name] for name in ("records.py", "runs.py", "backends.py")} == {
        "records.py": 1, "runs.py": 1, "backends.py": 1}


# What a plugin's own code may import of the core (kforge_core/plugin_api.py's docstring says why each): the package
# itself (hookimpl, KForgeError, the records), the contract (the hooks, the records, the device a vendor writes), a
# language's shared package, and plugin_api for everything else.
PLUGIN_MAY_IMPORT = ("kforge_core", "kforge_core.hookspecs", "kforge_core.records", "kforge_core.device",
                     "kforge_core.plugin_api")
PLUGIN_MAY_IMPORT_UNDER = ("kforge_core.languages",)


def core_imports_beyond_the_plugin_api(package: Path) -> list[str]:
    """``file:line: module`` for each import of ``package``'s code (lazy and typing-only ones included) that reaches
    the core other than through what a plugin may import; ``from kforge_core import name`` counts as
    ``kforge_core.name`` unless the package's ``__init__`` exports that name."""
    import kforge_core

    exported = set(kforge_core.__all__)
    found = []
    for path in sorted(package.rglob("*.py")):
        for node in ast.walk(ast.parse(path.read_text())):
            if isinstance(node, ast.Import):
                targets = [alias.name for alias in node.names]
            elif isinstance(node, ast.ImportFrom) and node.module and not node.level:
                targets = [node.module if node.module != "kforge_core" or alias.name in exported
                           else f"kforge_core.{alias.name}" for alias in node.names]
            else:
                continue
            for target in targets:
                if target.split(".")[0] != "kforge_core" or target in PLUGIN_MAY_IMPORT or any(
                        target.startswith(f"{root}.") or target == root for root in PLUGIN_MAY_IMPORT_UNDER):
                    continue
                line = f"{path.relative_to(package.parent)}:{node.lineno}: {target}"
                if line not in found:
                    found.append(line)
    return found


def test_plugins_reach_the_core_only_through_the_plugin_api():
    """A plugin's code imports of the core only the contract (the hooks, the records, the device a vendor writes), a
    language's package and ``kforge_core.plugin_api``: the core's other modules change with it, and a plugin that
    reached into them (``kforge_core.workload``, ``kforge_core.candidate_module``, ``kforge_core.harness.*``) would
    break with them."""
    assert PLUGIN_PACKAGES
    reached = [line for package in PLUGIN_PACKAGES for line in core_imports_beyond_the_plugin_api(package)]
    assert reached == [], "\n".join(reached)


def test_the_plugin_import_finder_finds_each_way_in(tmp_path):
    package = tmp_path / "kforge_x"
    package.mkdir()
    (package / "__init__.py").write_text(
        "from kforge_core import hookimpl, workload\n"  # a name the core exports; a module it does not
        "from kforge_core.plugin_api import floor_bytes\nfrom kforge_core.languages.triton import run_forward\n"
        "import kforge_core.codec\nfrom kforge_core.peaks import DevicePeaks\nfrom typing import TYPE_CHECKING\n"
        "if TYPE_CHECKING:\n"
        "    from kforge_core.settings import HarnessSettings\n"
        "def f():\n    from kforge_core.harness.worker.candidate import device_of\n")
    assert core_imports_beyond_the_plugin_api(package) == [
        "kforge_x/__init__.py:1: kforge_core.workload", "kforge_x/__init__.py:4: kforge_core.codec",
        "kforge_x/__init__.py:5: kforge_core.peaks", "kforge_x/__init__.py:8: kforge_core.settings",
        "kforge_x/__init__.py:10: kforge_core.harness.worker.candidate"]


def test_the_plugin_api_imports_no_torch():
    """A plugin imports ``kforge_core.plugin_api`` at the top of any module, so importing it must stay cheap: a
    machine without the plugin's device (or torch's build for it) still loads the plugin."""
    import subprocess
    import sys

    check = "import sys, kforge_core.plugin_api; print('torch' in sys.modules)"
    done = subprocess.run([sys.executable, "-c", check], capture_output=True, text=True, check=True)
    assert done.stdout.strip() == "False"


def test_plugin_tests_do_not_import_the_workers_internals():
    """A plugin's tests may import more of the core than its code (a problem, a harness, to build what they check),
    but not ``kforge_core.harness.worker``: what runs in the worker is reached through the harness."""
    worker = re.compile(r"^\s*(from|import)\s+kforge_core\.harness\.worker", re.MULTILINE)
    in_tests = [str(p.relative_to(REPO)) for p in sorted((REPO / "plugins").rglob("*.py"))
                if worker.search(p.read_text())]
    assert in_tests == []


def test_a_worker_loads_none_of_the_hosts_modules():
    """What the worker imports (its request loop and everything it reaches) loads nothing of ``harness/host``: the
    package's ``Harness`` is loaded only when asked for."""
    import subprocess
    import sys

    loaded = subprocess.run(
        [sys.executable, "-c", "import sys, kforge_core.harness.worker.worker; "
                               "print(sorted(m for m in sys.modules if m.startswith('kforge_core.harness.host')))"],
        capture_output=True, text=True, check=True).stdout.strip()
    assert loaded == "[]"


def kforge_imports_that_fail(root: Path) -> list[str]:
    """``file:line: module.name`` for each import of ``kforge_core`` in the scripts under ``root`` that names a
    module or a name the core does not have."""
    import importlib
    import importlib.util

    failed = []
    for path in sorted(root.glob("*.py")):
        for node in ast.walk(ast.parse(path.read_text())):
            if isinstance(node, ast.Import):
                wanted = [(alias.name, "") for alias in node.names]
            elif isinstance(node, ast.ImportFrom) and node.module and not node.level:
                wanted = [(node.module, alias.name) for alias in node.names]
            else:
                continue
            for module_name, name in wanted:
                if module_name.split(".")[0] != "kforge_core":
                    continue
                try:
                    module = importlib.import_module(module_name)
                    found = not name or hasattr(module, name) or importlib.util.find_spec(f"{module_name}.{name}")
                except ImportError:
                    found = False
                if not found:
                    failed.append(f"{path.name}:{node.lineno}: {module_name}{'.' + name if name else ''}")
    return failed


def test_the_benchmarks_import_what_the_core_has():
    """The benchmarks run on machines the suite does not reach (a GPU's): a module of the core they import that
    moved would show only there."""
    assert kforge_imports_that_fail(REPO / "benchmarks") == []


def test_the_benchmark_import_finder_finds_a_moved_module(tmp_path):
    (tmp_path / "bench.py").write_text("from kforge_core.harness.host.problem_size import call_bytes\n"
                                       "from kforge_core.harness.problem_size import call_bytes, no_such_name\n"
                                       "import kforge_core.records\n")
    assert kforge_imports_that_fail(tmp_path) == [
        "bench.py:1: kforge_core.harness.host.problem_size.call_bytes",
        "bench.py:2: kforge_core.harness.problem_size.no_such_name"]
