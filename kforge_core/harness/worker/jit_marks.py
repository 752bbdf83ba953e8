"""JIT compilations in any stage marked as builds on the stage's timer, so that time spent compiling inside a call
of ``forward`` (Dynamo and Inductor behind ``torch.compile``, Triton's JIT) does not count against that call's
limit. Runs in the worker, around every request that may call the candidate.

Dynamo is watched through ``torch._dynamo.callback``'s start and end callbacks (PyTorch 2.6 and later), when the
candidate has loaded Dynamo already (importing it costs seconds, which a candidate that never compiles should not
pay); a first ``torch.compile`` that loads it is seen from outside instead, by its stack
(``kforge_core.harness.host.activity``). Triton's compilations are marked by its own hooks
(``kforge_core.languages.triton.builds``).
"""

from __future__ import annotations

import contextlib
import sys
from typing import Any, Iterator

from ...languages.triton.builds import triton_builds_marked
from ...timing.stage_timer import StageTimer

_DYNAMO_BUILD = "Dynamo compiling (torch.compile)"


@contextlib.contextmanager
def dynamo_builds_marked(timer: StageTimer) -> Iterator[None]:
    """Within the block, each Dynamo compilation is a build on ``timer``."""
    callbacks = sys.modules.get("torch._dynamo.callback")
    handler = getattr(callbacks, "callback_handler", None)
    if handler is None or not hasattr(handler, "register_start_callback"):
        yield
        return
    open_builds: list[str] = []

    def started(*args: Any) -> None:
        open_builds.append(_DYNAMO_BUILD)
        timer.enter("build", _DYNAMO_BUILD)

    def ended(*args: Any) -> None:
        if open_builds:
            timer.leave("build", open_builds.pop())

    handler.register_start_callback(started)
    handler.register_end_callback(ended)
    try:
        yield
    finally:
        for remove, callback in ((handler.remove_start_callback, started), (handler.remove_end_callback, ended)):
            with contextlib.suppress(ValueError):
                remove(callback)
        while open_builds:
            timer.leave("build", open_builds.pop())


@contextlib.contextmanager
def jit_builds_marked(timer: StageTimer) -> Iterator[None]:
    """Dynamo's and Triton's compilations within the block are builds on ``timer``."""
    with dynamo_builds_marked(timer), triton_builds_marked(timer):
        yield
