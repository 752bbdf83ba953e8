"""Triton's JIT compilations marked as builds on a stage's timer, so that compiling on the first call of
``forward`` does not count against that call's time limit (see ``kforge_core.timing.stage_timer``).

Triton calls a hook before it compiles a kernel for a new signature and another after; since Triton 3.4 they are
``triton.knobs.runtime.jit_cache_hook`` and ``jit_post_compile_hook``, before that ``JITFunction.cache_hook`` and
``JITFunction.compiled_hook``. Within the block both are chained in front of whatever was set, and put back after.
Where the candidate did not import Triton, or its Triton has neither, the block marks nothing.
"""

from __future__ import annotations

import contextlib
import sys
from typing import Any, Iterator

from kforge_core.timing.stage_timer import StageTimer


def _hook_slots() -> tuple[Any, str, str] | None:
    """Where this Triton keeps its two hooks: (object, pre-compile attribute, post-compile attribute); None when
    the candidate has not imported Triton (then it compiles nothing with it)."""
    triton = sys.modules.get("triton")
    if triton is None:
        return None
    runtime = getattr(getattr(triton, "knobs", None), "runtime", None)
    if runtime is not None and hasattr(runtime, "jit_cache_hook") and hasattr(runtime, "jit_post_compile_hook"):
        return runtime, "jit_cache_hook", "jit_post_compile_hook"
    try:
        from triton.runtime.jit import JITFunction
    except ImportError:
        return None
    if hasattr(JITFunction, "cache_hook") and hasattr(JITFunction, "compiled_hook"):
        return JITFunction, "cache_hook", "compiled_hook"
    return None


def _kernel_name(kwargs: dict[str, Any]) -> str:
    fn = kwargs.get("fn")
    return str(getattr(fn, "name", None) or getattr(getattr(fn, "jit_function", None), "__name__", "a kernel"))


@contextlib.contextmanager
def triton_builds_marked(timer: StageTimer, slots: tuple[Any, str, str] | None = None) -> Iterator[None]:
    """Within the block, each Triton compilation is a build on ``timer``."""
    slots = slots if slots is not None else _hook_slots()
    if slots is None:
        yield
        return
    owner, pre_name, post_name = slots
    previous_pre, previous_post = getattr(owner, pre_name), getattr(owner, post_name)
    open_builds: list[str] = []

    def before_compile(*args: Any, **kwargs: Any) -> Any:
        skip = previous_pre(*args, **kwargs) if previous_pre is not None else None
        if not skip:  # a true answer tells Triton not to compile
            open_builds.append(f"Triton compiling {_kernel_name(kwargs)}")
            timer.enter("build", open_builds[-1])
        return skip

    def after_compile(*args: Any, **kwargs: Any) -> Any:
        if open_builds:
            timer.leave("build", open_builds.pop())
        return previous_post(*args, **kwargs) if previous_post is not None else None

    setattr(owner, pre_name, before_compile)
    setattr(owner, post_name, after_compile)
    try:
        yield
    finally:
        setattr(owner, pre_name, previous_pre)
        setattr(owner, post_name, previous_post)
        while open_builds:  # a compilation that raised never reached the second hook
            timer.leave("build", open_builds.pop())
