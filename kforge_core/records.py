"""Typed, frozen records that cross the hook boundary.

Hooks take and return these, never dicts. Each record checks itself in ``__post_init__`` so that a plugin that
returns something malformed fails at the point where it did so, with a message naming the field.

Records that travel between the KForge process and its isolated workers are plain data (strings, numbers, tuples of
records), so they pickle.
"""

from __future__ import annotations

import enum
import hashlib
import re
from dataclasses import dataclass, field, fields
from pathlib import Path
from typing import Any

from .timing.stage_timer import StageTimer

_NAME = re.compile(r"^[a-z][a-z0-9_-]*$")


def _check(condition: bool, record: object, message: str) -> None:
    if not condition:
        raise ValueError(f"{type(record).__name__}: {message}")


# ----------------------------------------------------------------------------------------------------- backends


@dataclass(frozen=True)
class Backend:
    """What a backend serves: a programming model on a device.

    :param name: the name users type (``--backend cuda``); lower case, digits, ``-`` and ``_``.
    :param programming_model: what candidates are written in, for people and prompts ("CUDA C++", "Numba").
    :param device: the device's name ("cpu", "cuda", "xpu", "mps"): the torch device type inputs and outputs live
        on, unless ``device_class`` says otherwise (its ``torch_type``).
    :param description: one line for ``kforge backends``.
    :param options_type: a frozen dataclass with defaults for the ``[backends.<name>]`` config table, or None.
    :param code_languages: fence languages a reply's code blocks may carry, most expected first; the first
        Python block holds ``ModelNew``.
    :param default_tolerance: ``dtype name -> (atol, rtol)`` overrides of the harness defaults for this backend.
    :param device_class: the :class:`kforge_core.device.Device` subclass that serves ``device`` (synchronising,
        timing, flushing, poisoning, fault classification); None: the core's built-in host CPU device. Its module
        must not import torch when it is imported.
    """

    name: str
    programming_model: str
    device: str
    description: str = ""
    options_type: type | None = None
    code_languages: tuple[str, ...] = ("python",)
    default_tolerance: tuple[tuple[str, float, float], ...] = ()
    device_class: type | None = None

    def __post_init__(self) -> None:
        _check(bool(_NAME.match(self.name)), self, f"name {self.name!r} must match {_NAME.pattern}")
        _check(bool(self.programming_model), self, "programming_model is empty")
        _check(bool(self.device), self, "device is empty")
        _check(bool(self.code_languages), self, "code_languages is empty")
        if self.options_type is not None:
            _check(
                hasattr(self.options_type, "__dataclass_fields__"),
                self,
                f"options_type {self.options_type!r} is not a dataclass",
            )
        _check(self.device_class is None or isinstance(self.device_class, type), self,
               f"device_class {self.device_class!r} is not a class")

    def default_options(self) -> Any:
        """The backend's options with every default, or None when it takes none."""
        return self.options_type() if self.options_type is not None else None


def options_hash(options: Any) -> str:
    """A stable hash of an options dataclass, for cache keys (build caches key on it, as Triton's do)."""
    if options is None:
        return "none"
    items = [(f.name, repr(getattr(options, f.name))) for f in fields(options)]
    return hashlib.sha256(repr((type(options).__qualname__, items)).encode()).hexdigest()[:16]


@dataclass(frozen=True)
class Availability:
    """Whether a backend can run here, and if not, why.

    :param available: True when candidates can be compiled and run on this machine.
    :param reason: required when not available: what is missing ("no CUDA device", "nvcc not found").
    :param detail: optional facts when available ("NVIDIA H100 80GB HBM3, sm_90, CUDA 13.0").
    """

    available: bool
    reason: str = ""
    detail: str = ""

    def __post_init__(self) -> None:
        _check(self.available or bool(self.reason), self, "an unavailable backend must say why (reason)")

    @classmethod
    def yes(cls, detail: str = "") -> Availability:
        return cls(True, "", detail)

    @classmethod
    def no(cls, reason: str) -> Availability:
        return cls(False, reason, "")


# ------------------------------------------------------------------------------------------------------ problems


VALUE_KINDS = ("tensor", "int", "float", "bool", "str", "none", "dtype", "size", "tuple", "list", "dict")


@dataclass(frozen=True)
class ValueSpec:
    """What one input, init input or output is: a tensor (shape and dtype), a plain value, or a container.

    :param kind: one of :data:`VALUE_KINDS`.
    :param shape: a tensor's shape, or a ``torch.Size``'s sizes.
    :param dtype: a tensor's dtype ("float32").
    :param items: a tuple's, list's or dict's entries, described the same way.
    :param keys: a dict's keys, in the order of ``items``.
    :param value: a plain value as Python writes it ("3", "True", "'mean'"), or a dtype's name.
    """

    kind: str
    shape: tuple[int, ...] = ()
    dtype: str = ""
    items: tuple[ValueSpec, ...] = ()
    keys: tuple[str, ...] = ()
    value: str = ""

    def __post_init__(self) -> None:
        _check(self.kind in VALUE_KINDS, self, f"unknown kind {self.kind!r}")
        _check(self.kind != "tensor" or bool(self.dtype), self, "a tensor needs a dtype")
        _check(not self.keys or len(self.keys) == len(self.items), self, "a dict needs one key per item")

    def describe(self) -> str:
        if self.kind == "tensor":
            return f"tensor{list(self.shape)} {self.dtype}"
        if self.kind == "size":
            return f"torch.Size({list(self.shape)})"
        if self.kind == "dtype":
            return f"torch.{self.value}"
        if self.kind == "none":
            return "None"
        if self.kind in ("tuple", "list"):
            return f"{self.kind}(" + ", ".join(item.describe() for item in self.items) + ")"
        if self.kind == "dict":
            return "dict(" + ", ".join(f"{k}: {v.describe()}" for k, v in zip(self.keys, self.items)) + ")"
        return f"{self.kind} {self.value}" if self.value else self.kind

    def leaves(self) -> tuple[ValueSpec, ...]:
        """Every value inside this one that is not a container (itself when it is not one)."""
        if self.kind in ("tuple", "list", "dict"):
            return tuple(leaf for item in self.items for leaf in item.leaves())
        return (self,)

    def tensors(self) -> tuple[ValueSpec, ...]:
        """The tensors inside this value."""
        return tuple(leaf for leaf in self.leaves() if leaf.kind == "tensor")


VARIANT_ORIGINS = ("declared", "derived")


@dataclass(frozen=True)
class ShapeVariant:
    """Another set of inputs a candidate must hold at, besides the problem's own (``get_inputs()``).

    :param name: how verdicts and prompts name it: ``half``, ``prime``, ``double`` (derived), or the problem's own
        name for a declared one (``decode``; ``declared 1`` for the second of a list).
    :param inputs: its inputs, described as :attr:`Problem.inputs` describes the problem's own.
    :param origin: ``declared`` (the problem's ``get_input_variants()``) or ``derived`` (by KForge).
    :param why: for a derived variant, which sizes it changes and why.
    :param sizes: for a derived variant, each size it changes: (the problem's size, the variant's).
    :param outputs: the reference's outputs at it, as the run that checked it gave them (empty: not run yet; the
        referee runs it before any candidate is judged there).
    :param weight: its share of the passes a model serves (a problem extracted from a model); 0: not stated.
    """

    name: str
    inputs: tuple[ValueSpec, ...]
    origin: str
    why: str = ""
    sizes: tuple[tuple[int, int], ...] = ()
    outputs: tuple[ValueSpec, ...] = ()
    weight: float = 0.0

    def __post_init__(self) -> None:
        _check(bool(self.name), self, "a variant needs a name")
        _check(self.origin in VARIANT_ORIGINS, self, f"origin {self.origin!r} must be one of {VARIANT_ORIGINS}")
        _check(self.weight >= 0, self, "weight must be >= 0")

    def describe(self) -> str:
        """``half (x tensor[8, 2048] float32)``: the name and the inputs' shapes."""
        return f"{self.name} ({', '.join(spec.describe() for spec in self.inputs)})"


@dataclass(frozen=True)
class FixedDimension:
    """A size of the problem's inputs that no derived variant changes, and why.

    :param size: the size.
    :param where: the dimensions that have it (``x dim 1``).
    :param reason: why it stays ("the reference fails when it changes (...); parameter linear.weight [128, 256] has
        this size").
    """

    size: int
    where: tuple[str, ...]
    reason: str


SHAPE_SOURCES = ("declared", "derived", "none")


@dataclass(frozen=True)
class ShapePlan:
    """The shapes a problem must hold at besides its own, and how they were chosen.

    :param source: ``declared`` (``get_input_variants()``), ``derived`` (KForge's, from the sizes it saw free), or
        ``none`` (no variant: none declared, and none derived).
    :param variants: the variants, each run once in verification.
    :param fixed: the sizes left fixed, each with its reason (derived plans only).
    :param notes: what else was decided: a variant dropped and why, where the reference was run to check them.
    :param own_weight: the problem's own shape's share of the passes a model serves; 0: not stated.
    """

    source: str = "none"
    variants: tuple[ShapeVariant, ...] = ()
    fixed: tuple[FixedDimension, ...] = ()
    notes: tuple[str, ...] = ()
    own_weight: float = 0.0

    def __post_init__(self) -> None:
        _check(self.source in SHAPE_SOURCES, self, f"source {self.source!r} must be one of {SHAPE_SOURCES}")
        _check(len({v.name for v in self.variants}) == len(self.variants), self, "variant names must differ")

    def variant(self, name: str) -> ShapeVariant:
        """The variant called ``name``; KeyError when there is none."""
        for variant in self.variants:
            if variant.name == name:
                return variant
        raise KeyError(name)


@dataclass(frozen=True)
class Problem:
    """A validated KernelBench-format problem: a file with ``Model``, ``get_inputs`` and ``get_init_inputs``.

    :param name: the file's stem.
    :param path: the absolute path of the problem file.
    :param source: the file's text, as read when it was validated.
    :param inputs: what ``get_inputs()`` returns.
    :param init_inputs: what ``get_init_inputs()`` returns.
    :param outputs: what ``Model(*init_inputs)(*inputs)`` returns, as a tuple even for one tensor; an output may
        be a tuple or list of tensors, nested.
    :param parameter_count: number of elements in the model's parameters.
    :param shapes: the other shapes a candidate must hold at (declared by the problem, or derived when it loaded).
    :param weight_bytes: bytes of the model's parameters and buffers as ``Model(*init_inputs)`` makes them (what
        every process that runs the problem holds besides a call's inputs and outputs).
    :param forward_peak_bytes: the most bytes the forward's own tensors (intermediates and outputs) held at once
        when the problem was described (``forward_peak.py``; 0: not known): what a call needs beyond its inputs
        and the weights.
    """

    name: str
    path: Path
    source: str
    inputs: tuple[ValueSpec, ...]
    init_inputs: tuple[ValueSpec, ...]
    outputs: tuple[ValueSpec, ...]
    parameter_count: int
    shapes: ShapePlan = field(default_factory=ShapePlan)
    weight_bytes: int = 0
    forward_peak_bytes: int = 0

    def __post_init__(self) -> None:
        _check(self.path.is_absolute(), self, f"path {self.path} must be absolute")
        _check(bool(self.outputs), self, "a problem has at least one output")
        _check(all(leaf.kind == "tensor" for o in self.outputs for leaf in o.leaves()), self,
               "outputs must be tensors (or tuples and lists of them)")

    @property
    def digest(self) -> str:
        """Content hash of the problem source; runs and caches key on it."""
        return hashlib.sha256(self.source.encode()).hexdigest()[:16]


# ---------------------------------------------------------------------------------------------------- candidates


@dataclass(frozen=True)
class SourceFile:
    """One file of a candidate, named relative to the candidate's directory."""

    name: str
    text: str

    def __post_init__(self) -> None:
        path = Path(self.name)
        _check(bool(self.name) and not path.is_absolute() and ".." not in path.parts, self,
               f"file name {self.name!r} must be a relative path inside the candidate directory")


@dataclass(frozen=True)
class Candidate:
    """A candidate kernel: a Python module that defines ``ModelNew``, plus any files it loads (``kernel.cu``).

    :param files: the candidate's files; exactly one of them is the entry module.
    :param entry: the name of the Python file that defines ``ModelNew``.
    :param label: a short name for logs and reports ("attempt-3").
    """

    files: tuple[SourceFile, ...]
    entry: str = "model_new.py"
    label: str = "candidate"

    def __post_init__(self) -> None:
        names = [f.name for f in self.files]
        _check(len(set(names)) == len(names), self, f"duplicate file names in {names}")
        _check(self.entry in names, self, f"entry {self.entry!r} is not among the files {names}")
        _check(self.entry.endswith(".py"), self, f"entry {self.entry!r} must be a .py file")

    @classmethod
    def from_source(cls, source: str, *, label: str = "candidate") -> Candidate:
        """A single-file candidate."""
        return cls(files=(SourceFile("model_new.py", source),), entry="model_new.py", label=label)

    @classmethod
    def from_path(cls, path: Path, *, label: str | None = None) -> Candidate:
        """A candidate read from a file; its entry keeps the file's name."""
        return cls(files=(SourceFile(path.name, path.read_text()),), entry=path.name, label=label or path.stem)

    @property
    def source(self) -> str:
        """The entry module's text."""
        return self.file(self.entry)

    def file(self, name: str) -> str:
        for f in self.files:
            if f.name == name:
                return f.text
        raise KeyError(name)

    @property
    def digest(self) -> str:
        """Content hash over every file, name and text."""
        h = hashlib.sha256()
        for f in sorted(self.files, key=lambda f: f.name):
            h.update(f.name.encode() + b"\0" + f.text.encode() + b"\0")
        return h.hexdigest()[:16]

    def write_to(self, directory: Path) -> Path:
        """Write every file under ``directory``; returns the entry module's path."""
        for f in self.files:
            target = directory / f.name
            target.parent.mkdir(parents=True, exist_ok=True)
            target.write_text(f.text)
        return directory / self.entry


# ------------------------------------------------------------------------------------------------------ lowering


@dataclass(frozen=True)
class Example:
    """A single-shot example: a problem and a candidate that solves it, both as source text."""

    problem: str
    solution: str
    note: str = ""


@dataclass(frozen=True)
class Lowering:
    """Everything the generation agent needs to know about a backend to write a candidate for it.

    :param backend: the backend's name.
    :param programming_model: how candidates are written: the model, its rules, and what keeps it fast.
    :param hardware: facts about the target read from this machine (device name, limits, peak rates).
    :param example: the plugin's single-shot example.
    :param reply_format: how the reply must lay out its code (fences, file names).
    """

    backend: str
    programming_model: str
    hardware: str
    example: Example
    reply_format: str = (
        "Answer with one fenced ```python block holding the complete module that defines ModelNew."
    )

    def __post_init__(self) -> None:
        _check(bool(self.programming_model.strip()), self, "programming_model is empty")
        _check(bool(self.example.solution.strip()), self, "the example has no solution")


# ------------------------------------------------------------------------------------------------------ verdicts


class Failure(str, enum.Enum):
    """Why a candidate did not pass. Every fault in a worker is one of these, never a crash of KForge."""

    SYNTAX = "syntax_error"
    IMPORT = "import_error"
    NO_MODEL_NEW = "no_model_new"
    COMPILE = "compile_error"
    RUNTIME = "runtime_error"
    OUTPUT_TYPE = "output_type"
    SHAPE = "shape_mismatch"
    DTYPE = "dtype_mismatch"
    MISMATCH = "numerical_mismatch"
    NAN_INF = "nan_inf"
    TIMEOUT = "timeout"
    CRASH = "crash"
    EXIT = "exit"
    OUT_OF_MEMORY = "out_of_memory"
    DEVICE_FAULT = "device_fault"
    RESOURCE_LIMIT = "resource_limit"  # a limit of the sandbox (processes, disk, scratch space) was reached
    CHEAT = "cheat"
    HARNESS = "harness_error"

    @property
    def builds(self) -> bool:
        """Whether this is a failure to build the candidate (its source, its import, a compiler). Anything else in
        the compile stage is not a build that failed: a forward that never returned in the run that builds a Numba
        candidate's kernels is a timeout."""
        return self in (Failure.SYNTAX, Failure.IMPORT, Failure.NO_MODEL_NEW, Failure.COMPILE)


@dataclass(frozen=True)
class CompileResult:
    """The outcome of building a candidate.

    :param ok: True when the candidate built and its ``ModelNew`` can be instantiated.
    :param log: the toolchain's output, trimmed so a model can read it (first errors with their source lines).
    :param seconds: wall time of the build.
    :param cached: True when every artifact came from the build cache.
    :param failure: on failure, its class (``Failure.SYNTAX``, ``Failure.COMPILE``, ...).
    """

    ok: bool
    log: str = ""
    seconds: float = 0.0
    cached: bool = False
    failure: Failure | None = None
    flags: tuple[Flag, ...] = ()  # what building showed (a build error the candidate caught, with its log)

    def __post_init__(self) -> None:
        _check(self.ok == (self.failure is None), self, "failure must be set exactly when ok is False")
        _check(self.seconds >= 0, self, "seconds must be >= 0")


@dataclass(frozen=True)
class TrialError:
    """One correctness trial: the seed of its inputs and how far the candidate was from the reference."""

    seed: int
    passed: bool
    max_abs_error: float
    max_rel_error: float
    message: str = ""


@dataclass(frozen=True)
class Flag:
    """A suspicion raised about a candidate (or a problem), with the evidence.

    :param code: a stable identifier ("reference_call", "cached_output", ...); docs/eval.md lists them.
    :param message: what was seen, for people and for the agent.
    :param blocking: True when the flag disqualifies the candidate under the active policy.
    """

    code: str
    message: str
    blocking: bool = True

    def __post_init__(self) -> None:
        _check(bool(_NAME.match(self.code)), self, f"code {self.code!r} must match {_NAME.pattern}")


@dataclass(frozen=True)
class SourceCheck:
    """A pattern a backend's plugin asks the static check to look for in a candidate's files (any file: Python,
    CUDA sources, shaders), raising a non-blocking flag where it is found.

    :param code: the flag's code ("l2_persistence"); a cheat of the catalogue or the plugin's own.
    :param pattern: a regular expression, searched case-insensitively in each file's text.
    :param what: what a match is, for the flag's message ("the persisting-L2 APIs").
    """

    code: str
    pattern: str
    what: str

    def __post_init__(self) -> None:
        _check(bool(_NAME.match(self.code)), self, f"code {self.code!r} must match {_NAME.pattern}")
        try:
            re.compile(self.pattern)
        except re.error as exc:
            _check(False, self, f"pattern {self.pattern!r} is not a regular expression: {exc}")

    def finds(self, text: str) -> bool:
        return re.search(self.pattern, text, re.IGNORECASE) is not None


VARIANT_STATUSES = ("held", "failed", "dropped", "not_run")


@dataclass(frozen=True)
class VariantOutcome:
    """How a candidate did at one shape variant.

    :param variant: the variant's name (:attr:`ShapeVariant.name`).
    :param status: ``held`` (judged correct), ``failed`` (wrong there, or it raised), ``dropped`` (the reference
        itself cannot run there: never the candidate's failure) or ``not_run`` (verification ended before it).
    :param failure: for ``failed``, its class.
    :param message: what the referee or the call said; for ``dropped``, why.
    """

    variant: str
    status: str
    failure: Failure | None = None
    message: str = ""

    def __post_init__(self) -> None:
        _check(self.status in VARIANT_STATUSES, self, f"status {self.status!r} must be one of {VARIANT_STATUSES}")
        _check((self.status == "failed") == (self.failure is not None), self,
               "failure must be set exactly when the status is failed")


@dataclass(frozen=True)
class ShapeCheck:
    """The shape variants a candidate was checked at, and how it did at each.

    :param policy: ``harness.shapes`` when it was checked (``strict`` or ``report``).
    :param plan: the problem's variants and why they were chosen.
    :param outcomes: one per variant, in the plan's order.
    """

    policy: str
    plan: ShapePlan
    outcomes: tuple[VariantOutcome, ...] = ()

    @property
    def failed(self) -> tuple[VariantOutcome, ...]:
        return tuple(outcome for outcome in self.outcomes if outcome.status == "failed")


@dataclass(frozen=True)
class VerifyResult:
    """Whether a candidate computes what the reference computes.

    :param correct: True when every trial passed and no blocking flag was raised.
    :param trials: one entry per trial, in order.
    :param failure: when not correct, its class.
    :param message: a short explanation for the agent ("trial 2: max abs error 0.31 > atol 1e-4 at [3, 17]").
    :param flags: suspicions raised while verifying.
    :param notes: facts worth reporting ("copied 2 parameters and 0 buffers from Model into ModelNew").
    :param precision_bits: the precision reached: the fewest bits of agreement of any output with the reference
        computed in float64 (None when not estimated).
    :param shapes: the shape variants it was checked at and how it did there (None: none were run).
    """

    correct: bool
    trials: tuple[TrialError, ...] = ()
    failure: Failure | None = None
    message: str = ""
    flags: tuple[Flag, ...] = ()
    notes: tuple[str, ...] = ()
    precision_bits: float | None = None
    shapes: ShapeCheck | None = None

    def __post_init__(self) -> None:
        _check(self.correct == (self.failure is None), self, "failure must be set exactly when correct is False")


# ------------------------------------------------------------------------------------------------------ profiles


@dataclass(frozen=True)
class KernelMetrics:
    """One kernel seen by a profiler, with the metrics it reported (name -> value, units in the name)."""

    name: str
    duration_us: float | None = None
    metrics: tuple[tuple[str, float | str], ...] = ()

    def metric(self, key: str) -> float | str | None:
        for k, v in self.metrics:
            if k == key:
                return v
        return None


@dataclass(frozen=True)
class ProfileResult:
    """Raw profiler output for one candidate, as the backend's profiler gave it.

    :param tool: which profiler ("ncu", "torch.profiler", "numba", "xcode-gpu-capture").
    :param kernels: the kernels that ran, parsed into typed records where the tool allows.
    :param raw: the tool's own text output (CSV, report), possibly trimmed.
    :param files: paths of files the tool wrote (reports, screenshots), kept in the run directory.
    :param ops: the framework operators that ran (``aten::mm``), for the check that work happened in kernels.
    """

    tool: str
    kernels: tuple[KernelMetrics, ...] = ()
    raw: str = ""
    files: tuple[Path, ...] = ()
    ops: tuple[str, ...] = ()


@dataclass(frozen=True)
class Image:
    """An image attached to a profile summary (a profiler GUI screenshot, a roofline plot)."""

    path: Path
    caption: str = ""
    mime: str = "image/png"


@dataclass(frozen=True)
class ProfileSummary:
    """A compact, ranked summary of a profile, written for the performance-analysis agent.

    :param text: the summary: per kernel what bounds it and the few numbers that justify it.
    :param images: pictures that carry what text cannot (GUI profiler screenshots).
    """

    text: str
    images: tuple[Image, ...] = ()

    def __post_init__(self) -> None:
        _check(bool(self.text.strip()) or bool(self.images), self, "a summary needs text or images")


@dataclass(frozen=True)
class StageContext:
    """What every stage hook running in a worker gets besides the backend and the candidate.

    :param problem: the problem being solved.
    :param workdir: the candidate's scratch directory; its files are written there and the process runs there.
    :param options: the backend's options (an instance of ``Backend.options_type``) or None.
    :param cache_dir: a directory that persists across candidates and runs, for build caches.
    :param settings: the harness settings.
    :param device: the worker's device, a :class:`kforge_core.devices.harness_device.HarnessDevice` around the
        backend's :class:`kforge_core.device.Device` (None where no device may be used: building ahead).
    :param timer: where a stage marks its calls of ``forward`` and its builds, so each gets its own time limit
        (see :mod:`kforge_core.timing.stage_timer`).
    """

    problem: Problem
    workdir: Path
    options: Any = None
    cache_dir: Path | None = None
    settings: Any = field(default=None, compare=False)
    device: Any = field(default=None, compare=False)
    timer: StageTimer = field(default_factory=StageTimer, compare=False)
