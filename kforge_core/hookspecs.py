"""The contract between KForge's core and its backend plugins.

A plugin is a module (or object) with functions decorated ``@kforge_core.hookimpl`` whose names are the hooks below.
It implements only the hooks it needs and, in each, only the arguments it uses. Stage hooks (every hook but
``register_backends``) are routed: the core calls them only on the plugin that registered the backend, then on the
core's generic implementations (``kforge_core.routing``), so an implementation never asks whose backend it was
given, nor the type of its options: a plugin registers one backend (languages that share a device share a vendor
layer, as ``cuda``, ``triton`` and ``cute`` share ``kforge_nvidia``; see docs/plugins.md). A backend's device comes
with it: ``Backend.device_class`` (``kforge_core.device``). What a plugin may use of the harness is
``kforge_core.plugin_api``.

The data flows one way: ``lower`` -> (the agent writes a candidate) -> ``compile`` -> ``verify`` -> ``profile``
-> ``summarize_profile`` -> (the analyst recommends) -> ``lower``'s output plus the recommendations -> ...

``prebuild`` may run ahead of ``compile``, in a child process of its own, for candidates waiting their turn.
``source_checks`` and ``device_namespaces`` extend the harness's cheat checks with what a device's plugin knows.

``prebuild``, ``compile``, ``verify`` and ``profile`` run inside isolated child processes, never in the KForge process;
``device_namespaces`` runs there too; ``register_backends``, ``backend_availability``, ``lower``, ``source_checks``
and ``summarize_profile`` run in the KForge process and must not import candidate code.
"""

from __future__ import annotations

from pathlib import Path
from typing import TYPE_CHECKING, Any, Callable

import pluggy

if TYPE_CHECKING:
    from .records import (
        Availability,
        Backend,
        Candidate,
        CompileResult,
        Lowering,
        Problem,
        ProfileResult,
        ProfileSummary,
        SourceCheck,
        StageContext,
        VerifyResult,
    )

PROJECT = "kforge"
hookspec = pluggy.HookspecMarker(PROJECT)
hookimpl = pluggy.HookimplMarker(PROJECT)


@hookspec
def kforge_register_backends(register: Callable[[Backend], None]) -> None:
    """Register the backends this plugin serves.

    :param register: call it once per backend with a :class:`~kforge_core.records.Backend`. The core records which
        distribution registered it and rejects a name that two plugins register.

    Example::

        @hookimpl
        def kforge_register_backends(register):
            register(Backend(name="metal", programming_model="Metal Shading Language", device="mps"))
    """


@hookspec(firstresult=True)
def kforge_backend_availability(backend: Backend, options: Any) -> Availability | None:
    """Say whether ``backend`` can compile and run candidates on this machine, and if not, why.

    Must be quick and must not raise for a missing device or toolchain: that is an answer
    (``Availability.no("nvcc not found")``), not an error.

    :param backend: a backend this plugin registered.
    :param options: the backend's options from config, an instance of ``backend.options_type`` or None.
    :return: an :class:`~kforge_core.records.Availability`.

    Stops at the first non-None result.

    Example::

        @hookimpl
        def kforge_backend_availability(backend):
            if not torch.backends.mps.is_available():
                return Availability.no("needs macOS with MPS")
            return Availability.yes()
    """


@hookspec(firstresult=True)
def kforge_lower(backend: Backend, problem: Problem, options: Any, cache_dir: Path) -> Lowering | None:
    """Describe how to write a candidate for ``problem`` on ``backend``: the programming model, the hardware,
    the single-shot example and the reply format. The generation agent's prompt is built from it.

    :param backend: the target backend, one this plugin registered.
    :param problem: the validated problem.
    :param options: the backend's options, or None.
    :param cache_dir: a directory that persists across runs, for facts measured once per machine.
    :return: a :class:`~kforge_core.records.Lowering`.

    Stops at the first non-None result.

    Example::

        @hookimpl
        def kforge_lower(backend, problem):
            return Lowering(backend=backend.name, programming_model=MODEL_TEXT, hardware=gpu_facts(),
                            example=Example(problem=EXAMPLE_PROBLEM, solution=EXAMPLE_SOLUTION))
    """


@hookspec(firstresult=True)
def kforge_prebuild(backend: Backend, candidate: Candidate, context: StageContext) -> CompileResult | None:
    """Build ahead what ``candidate`` will need, without running it, so that its :func:`kforge_compile` later
    finds every build in the cache.

    When several candidates wait to be evaluated, the harness calls this for the waiting ones, each in a child
    process of its own (in a scratch directory, ``context.workdir``, with the candidate's files written there),
    while the device times another candidate. So it must neither import nor execute the candidate's code (read
    its sources instead) nor put work on the device (``context.device`` is None). Only backends whose plugin
    implements this hook are built ahead. Return None for one with nothing to build ahead (a JIT that compiles on
    the first call): after the first None the harness starts no more of these processes for it.

    :param backend: the target backend, one this plugin registered.
    :param candidate: the candidate's files.
    :param context: as for :func:`kforge_compile`; builds go under ``context.cache_dir``.
    :return: a :class:`~kforge_core.records.CompileResult`: ``cached`` when everything was built before, ``ok``
        False with the log when a build failed. It only informs: :func:`kforge_compile` gives the verdict.

    Stops at the first non-None result.

    Example::

        @hookimpl
        def kforge_prebuild(backend, candidate, context):
            sources = shader_sources(candidate)  # string literals found in the candidate's files
            return build_into_cache(sources, context.cache_dir)
    """


@hookspec(firstresult=True)
def kforge_compile(backend: Backend, candidate: Candidate, context: StageContext) -> CompileResult | None:
    """Build ``candidate`` so that its ``ModelNew`` can run. Runs inside the isolated worker, in
    ``context.workdir``, where the candidate's files have been written.

    Do whatever the toolchain needs (run ``nvcc``, force a JIT on the problem's first inputs) and turn the
    toolchain's failure into ``CompileResult(ok=False, failure=Failure.COMPILE, log=...)`` with a log trimmed to
    what a model needs. Import the candidate with
    :func:`kforge_core.candidate_module.import_candidate`, which the later stages share, and find its class with
    :func:`~kforge_core.candidate_module.candidate_class` (``ModelNew``, ``Model``, or ``harness.candidate_class``).
    A call of ``forward`` goes inside ``context.timer.calling(...)`` and a JIT build inside
    ``context.timer.building(...)``, so a forward that never returns times out at the call's limit, not the build's.

    :param backend: the target backend, one this plugin registered.
    :param candidate: the candidate's files.
    :param context: the problem, the scratch directory, the backend's options, a persistent cache directory and
        the worker's device (``context.device``: the backend's :class:`kforge_core.device.Device` with the
        harness's policy around it, a :class:`kforge_core.devices.harness_device.HarnessDevice`).
    :return: a :class:`~kforge_core.records.CompileResult`.

    Stops at the first non-None result. The core's generic implementation checks the syntax and imports the module.

    Example::

        @hookimpl
        def kforge_compile(backend, candidate, context):
            module = import_candidate(candidate, context.workdir)
            ...  # compile the shaders the module declares, and report their errors
            return CompileResult(ok=True, seconds=elapsed)
    """


@hookspec(firstresult=True)
def kforge_verify(backend: Backend, candidate: Candidate, context: StageContext) -> VerifyResult | None:
    """Check that the compiled candidate computes what the problem's ``Model`` computes. Runs inside the worker,
    after :func:`kforge_compile` succeeded in the same process.

    The core's generic implementation works on any device through ``context.device`` (the backend's
    ``device_class``): seeded trials with fresh inputs, dtype tolerances, the candidate's parameters initialised as
    KernelBench does (then copied from the reference where that fails), the cheat checks and one call at each of
    the problem's shape variants (``context.problem.shapes``). Override it only for what a device needs
    differently: the referee expects every trial and every variant's call.

    :param backend: the target backend, one this plugin registered.
    :param candidate: the candidate.
    :param context: as for :func:`kforge_compile`; ``context.settings`` holds the harness settings.
    :return: a :class:`~kforge_core.records.VerifyResult`.

    Stops at the first non-None result.

    Example::

        @hookimpl
        def kforge_verify(backend, candidate, context):
            return None  # the generic torch-device verification serves this backend
    """


@hookspec(firstresult=True)
def kforge_profile(backend: Backend, candidate: Candidate, context: StageContext) -> ProfileResult | None:
    """Run the backend's profiler on a correct candidate and return its raw output. Runs inside the worker (and
    may start the profiler as a child of it, such as ``ncu``).

    :param backend: the target backend, one this plugin registered.
    :param candidate: a candidate that passed :func:`kforge_verify`.
    :param context: as for :func:`kforge_compile`.
    :return: a :class:`~kforge_core.records.ProfileResult` with the kernels and operators that ran.

    Stops at the first non-None result. The core's generic implementation uses the PyTorch profiler.

    Example::

        @hookimpl
        def kforge_profile(backend, candidate, context):
            if shutil.which("ncu"):
                csv_text = run_ncu(context)
                return ProfileResult(tool="ncu", kernels=parse_ncu_csv(csv_text), raw=csv_text)
    """


@hookspec(firstresult=True)
def kforge_summarize_profile(backend: Backend, problem: Problem, profile: ProfileResult) -> ProfileSummary | None:
    """Turn raw profiler output into a short, ranked summary for the performance-analysis agent: per kernel,
    what bounds it and the few numbers that say so. Runs in the KForge process; never runs candidate code.

    :param backend: the target backend, one this plugin registered.
    :param problem: the problem, for counting the bytes and operations it needs.
    :param profile: what :func:`kforge_profile` returned.
    :return: a :class:`~kforge_core.records.ProfileSummary` (text, and images where the profiler is a GUI tool).

    Stops at the first non-None result.

    Example::

        @hookimpl
        def kforge_summarize_profile(backend, profile):
            if profile.tool == "ncu":
                return ProfileSummary(text=rank_kernels(profile.kernels))
    """


@hookspec
def kforge_source_checks(backend: Backend) -> list[SourceCheck]:
    """Patterns the static check looks for in a candidate's files, beyond the core's own: the device's APIs a
    candidate could cheat with. Runs in the KForge process, on the text alone, before the candidate runs.

    A match is evidence, not a verdict (the code may never run): it becomes a non-blocking flag whose message
    starts with "source:"; the worker's dynamic checks decide.

    :param backend: the target backend, one this plugin registered.
    :return: a list of :class:`~kforge_core.records.SourceCheck`, each a flag code, a regular expression and
        what a match is.

    Every implementation's answers are used.

    Example::

        @hookimpl
        def kforge_source_checks(backend):
            return [SourceCheck(code="l2_persistence", pattern=r"cudaLimitPersistingL2CacheSize|accessPolicyWindow",
                                what="the persisting-L2 APIs")]
    """


@hookspec
def kforge_device_namespaces(backend: Backend) -> list[str]:
    """The modules of the backend's device runtime whose functions a candidate must not replace, such as
    ``"torch.cuda"``. Runs inside the worker, before each candidate is imported.

    The worker's integrity check records every function of these modules (besides torch's own and the harness's)
    and reports a replaced one as tampering.

    :param backend: the target backend, one this plugin registered.
    :return: a list of importable module names.

    Every implementation's answers are used.

    Example::

        @hookimpl
        def kforge_device_namespaces(backend):
            return ["torch.mps"]
    """
