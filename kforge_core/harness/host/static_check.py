"""What a candidate's source shows before it runs. Runs in the KForge process on the text alone (``ast.parse``
executes nothing).

Findings are evidence, not verdicts (the code may never run), so they become non-blocking flags whose message
starts with "source:"; the dynamic checks in the worker decide. What is looked for:

* ``reference_call``: calls of PyTorch compute functions (``torch.matmul``, ``F.gelu``; not the allocation and
  view functions of :data:`~kforge_core.harness.op_trace.NON_COMPUTE_OPS`, nor ``torch.randn`` and the like drawing
  parameters' initial values in ``__init__``), and use of the problem's ``Model``, ``get_inputs`` or
  ``get_init_inputs``.
* ``tampering``: assigning to attributes of ``torch``, ``time``, ``builtins`` or the harness, importing the
  harness, reaching into frames, ``gc`` or ``sys.modules``, registering kernels for ``aten`` operators.
* ``async_output``: threads, processes and CUDA streams.
* ``precision_downgrade``: TF32 and reduced-precision switches, conversions to float16/bfloat16 (for problems
  whose outputs are wider), each unless the precision contract allows what it enables.
* ``l2_persistence``: the persisting-L2 APIs, in any of the candidate's files (CUDA sources included).
"""

from __future__ import annotations

import ast
import re

from ...candidate_source import parsed_python_files
from ...precision_contract import CONTRACTS, DEFAULT, PrecisionContract
from ...records import Candidate, Flag, Problem
from .. import flags as F
from ..op_trace import NON_COMPUTE_OPS
from ..precision_switches import BOOLEAN_SWITCHES, PRECISION_VALUES

_TORCH_COMPUTE_NAMESPACES = ("torch", "torch.nn.functional", "torch.linalg", "torch.special", "torch.fft",
                             "torch.sparse", "torch.ops.aten")
_NON_COMPUTE_CALLS = NON_COMPUTE_OPS | {
    "tensor", "as_tensor", "from_numpy", "device", "no_grad", "inference_mode", "manual_seed", "is_tensor",
    "Size", "Generator", "get_default_dtype", "set_grad_enabled", "empty_cache", "compile",
}
# drawing a parameter's initial values in __init__ is initialisation, not the forward computed by PyTorch
_PARAMETER_INITIALISERS = {"randn", "rand", "randint", "randperm", "normal", "randn_like", "rand_like",
                           "randint_like", "bernoulli", "uniform", "empty_like", "zeros_like", "ones_like"}
_SETTINGS_PREFIXES = ("set_", "get_", "is_", "use_", "are_", "_")  # switches and queries, not computation
_PATCHABLE_ROOTS = ("torch", "time", "builtins", "kforge_core", "numpy", "math")
_REFERENCE_NAMES = {"Model", "get_inputs", "get_init_inputs"}
_INTROSPECTION = {"sys._getframe", "inspect.currentframe", "inspect.stack", "inspect.getouterframes",
                  "gc.get_objects", "gc.get_referrers", "gc.get_referents", "sys.modules", "sys.settrace",
                  "sys.setprofile", "builtins.__dict__", "os.dup2", "torch.library.impl", "torch.library.Library",
                  "torch.utils._python_dispatch.TorchDispatchMode", "torch.overrides.TorchFunctionMode"}
_ASYNC = {"threading.Thread", "threading.Timer", "concurrent.futures.ThreadPoolExecutor",
          "concurrent.futures.ProcessPoolExecutor", "multiprocessing.Process", "multiprocessing.Pool",
          "torch.cuda.Stream", "torch.cuda.stream", "torch.cuda.ExternalStream", "asyncio.run", "os.fork"}
# precision switch -> the compute type it enables (None: it depends on the value, read when it is a literal)
_PRECISION_ATTRS: dict[str, str | None] = {**BOOLEAN_SWITCHES, "set_float32_matmul_precision": None,
                                           "fp32_precision": None}
_NARROW_TYPES = {"torch.float16": "float16", "torch.half": "float16", "torch.bfloat16": "bfloat16",
                 "numpy.float16": "float16", "half": "float16", "bfloat16": "bfloat16"}
_L2_PERSISTENCE = re.compile(r"cudaLimitPersistingL2CacheSize|CU_LIMIT_PERSISTING_L2_CACHE_SIZE|accessPolicyWindow|"
                             r"cudaAccessPropertyPersisting|CU_ACCESS_PROPERTY_PERSISTING|hitProp|"
                             r"cuCtxSetLimit|cudaDeviceSetLimit", re.IGNORECASE)


class _Aliases(ast.NodeVisitor):
    """Local names of imported modules and functions: ``F`` -> ``torch.nn.functional``."""

    def __init__(self) -> None:
        self.names: dict[str, str] = {}
        self.defined: set[str] = set()

    def visit_Import(self, node: ast.Import) -> None:
        for alias in node.names:
            if alias.asname:
                self.names[alias.asname] = alias.name
            else:
                self.names[alias.name.split(".")[0]] = alias.name.split(".")[0]

    def visit_ImportFrom(self, node: ast.ImportFrom) -> None:
        if node.module and node.level == 0:
            for alias in node.names:
                self.names[alias.asname or alias.name] = f"{node.module}.{alias.name}"

    def visit_ClassDef(self, node: ast.ClassDef) -> None:
        self.defined.add(node.name)
        self.generic_visit(node)

    def visit_FunctionDef(self, node: ast.FunctionDef) -> None:
        self.defined.add(node.name)
        self.generic_visit(node)


def _dotted(node: ast.AST, aliases: dict[str, str]) -> str | None:
    """``F.gelu`` -> ``torch.nn.functional.gelu`` when F was imported as that; None for non-names."""
    parts = []
    while isinstance(node, ast.Attribute):
        parts.append(node.attr)
        node = node.value
    if not isinstance(node, ast.Name):
        return None
    root = aliases.get(node.id, node.id)
    return ".".join([root, *reversed(parts)])


def _switch_value(attr: str, value: ast.AST | None) -> str | None:
    """The compute type a precision switch enables, when the source says (a literal value)."""
    if _PRECISION_ATTRS[attr] is not None:
        return _PRECISION_ATTRS[attr] if not (isinstance(value, ast.Constant) and value.value is False) else "float32"
    return PRECISION_VALUES.get(value.value) if isinstance(value, ast.Constant) else None


class _Finder(ast.NodeVisitor):
    def __init__(self, aliases: _Aliases, wide_outputs: bool, contract: PrecisionContract) -> None:
        self.aliases = aliases
        self.wide_outputs = wide_outputs
        self.contract = contract
        self.found: dict[str, list[str]] = {}
        self.in_init = 0  # depth of __init__ bodies being visited

    def add(self, code: str, what: str, node: ast.AST) -> None:
        entry = f"{what} (line {getattr(node, 'lineno', '?')})"
        if entry not in self.found.setdefault(code, []):
            self.found[code].append(entry)

    def add_precision(self, compute_type: str | None, what: str, node: ast.AST) -> None:
        """Evidence of computing in ``compute_type`` (None: not known), unless the contract permits it."""
        if not self.contract.permits(compute_type):
            self.add(F.PRECISION_DOWNGRADE, what, node)

    def visit_Call(self, node: ast.Call) -> None:
        name = _dotted(node.func, self.aliases.names)
        if name:
            namespace, _, function = name.rpartition(".")
            initialiser = self.in_init and function in _PARAMETER_INITIALISERS
            if namespace in _TORCH_COMPUTE_NAMESPACES and function not in _NON_COMPUTE_CALLS and not initialiser \
                    and not function[:1].isupper() and not function.startswith(_SETTINGS_PREFIXES):
                self.add(F.REFERENCE_CALL, f"calls {name}", node)
            if name in _ASYNC:
                self.add(F.ASYNC_OUTPUT, f"uses {name}", node)
            if name in _INTROSPECTION:
                self.add(F.TAMPERING, f"uses {name}", node)
            if name in ("setattr", "builtins.setattr") and node.args:
                target = _dotted(node.args[0], self.aliases.names) or ""
                if target.split(".")[0] in _PATCHABLE_ROOTS:
                    self.add(F.TAMPERING, f"setattr on {target}", node)
            if function in _PRECISION_ATTRS:
                self.add_precision(_switch_value(function, node.args[0] if node.args else None), f"calls {name}",
                                   node)
        method = node.func.attr if isinstance(node.func, ast.Attribute) else ""
        if method in ("half", "bfloat16") and self.wide_outputs:  # x.half(), whatever x is
            self.add_precision(_NARROW_TYPES[method], f"converts with .{method}()", node)
        self.generic_visit(node)

    def visit_FunctionDef(self, node: ast.FunctionDef) -> None:
        self.in_init += node.name == "__init__"
        self.generic_visit(node)
        self.in_init -= node.name == "__init__"

    def visit_Attribute(self, node: ast.Attribute) -> None:
        name = _dotted(node, self.aliases.names)
        if name in _INTROSPECTION:
            self.add(F.TAMPERING, f"uses {name}", node)
        if name in _NARROW_TYPES and self.wide_outputs:
            self.add_precision(_NARROW_TYPES[name], f"uses {name}", node)
        self.generic_visit(node)

    def visit_Name(self, node: ast.Name) -> None:
        if node.id in _REFERENCE_NAMES and isinstance(node.ctx, ast.Load) and node.id not in self.aliases.defined:
            self.add(F.REFERENCE_CALL, f"uses the problem's {node.id}", node)
        self.generic_visit(node)

    def visit_Assign(self, node: ast.Assign) -> None:
        for target in node.targets:
            self._check_store(target, node, node.value)
        self.generic_visit(node)

    def visit_AugAssign(self, node: ast.AugAssign) -> None:
        self._check_store(node.target, node, None)
        self.generic_visit(node)

    def _check_store(self, target: ast.AST, node: ast.AST, value: ast.AST | None) -> None:
        if not isinstance(target, ast.Attribute):
            return
        name = _dotted(target, self.aliases.names) or ""
        if target.attr in _PRECISION_ATTRS:
            self.add_precision(_switch_value(target.attr, value), f"sets {name}", node)
        elif name.split(".")[0] in _PATCHABLE_ROOTS:
            self.add(F.TAMPERING, f"assigns {name}", node)

    def visit_Import(self, node: ast.Import) -> None:
        for alias in node.names:
            if alias.name.startswith("kforge_core") or alias.name.startswith("kforge_problem"):
                self.add(F.TAMPERING, f"imports {alias.name}", node)

    def visit_ImportFrom(self, node: ast.ImportFrom) -> None:
        if node.module and (node.module.startswith("kforge_core") or node.module.startswith("kforge_problem")):
            self.add(F.TAMPERING, f"imports from {node.module}", node)


def check_source(candidate: Candidate, problem: Problem, contract: PrecisionContract = CONTRACTS[DEFAULT]
                 ) -> tuple[Flag, ...]:
    """Non-blocking flags for what the candidate's files show (precision evidence judged against ``contract``)."""
    wide_outputs = any(t.dtype in ("float32", "float64") for o in problem.outputs for t in o.tensors())
    found: dict[str, list[str]] = {}
    for file in candidate.files:
        if _L2_PERSISTENCE.search(file.text):
            found.setdefault(F.L2_PERSISTENCE, []).append(f"{file.name} names the persisting-L2 APIs")
    for file, tree in parsed_python_files(candidate):
        aliases = _Aliases()
        aliases.visit(tree)
        finder = _Finder(aliases, wide_outputs, contract)
        finder.visit(tree)
        for code, entries in finder.found.items():
            found.setdefault(code, []).extend(f"{file.name}: {e}" for e in entries)
    return tuple(F.source_flag(code, "; ".join(entries[:12]) + (" ..." if len(entries) > 12 else ""))
                 for code, entries in found.items())
