"""How a stage running in a worker tells the harness what it is waiting for, so each wait gets its own limit.

A stage mixes work of different lengths: a build (an import that compiles, a JIT, ``load_inline``) may take
minutes, while a call of ``forward`` on a millisecond problem that has not returned after a few seconds never will.
A stage hook marks its calls with :meth:`StageTimer.calling` and its builds with :meth:`StageTimer.building`; the
harness then gives a call the call's timeout and a build the build's, and a build inside a call (a JIT on the first
call) does not count against the call. Outside a harness (a hook called directly) the marks do nothing.

Example, in a compile stage that runs the first forward::

    with context.timer.calling("the first forward"):
        model(*inputs)
"""

from __future__ import annotations

import contextlib
from typing import Iterator


class StageTimer:
    """Marks for the waits of a stage. This base does nothing; the harness's worker sends each mark to the
    KForge process, which enforces the limits."""

    def calling(self, what: str) -> contextlib.AbstractContextManager[None]:
        """A call of the candidate's ``forward`` (``what`` names it in a timeout's message)."""
        return self._waiting("call", what)

    def timed(self, what: str) -> contextlib.AbstractContextManager[None]:
        """A timed call: a call whose beginning the KForge process has noted by its own clock before the block
        goes on, so that the call's interval by that clock holds the worker's own measurement of it."""
        return self._waiting("timed", what)

    def building(self, what: str) -> contextlib.AbstractContextManager[None]:
        """A build: compiling, a JIT, constructing a model that builds an extension."""
        return self._waiting("build", what)

    @contextlib.contextmanager
    def _waiting(self, kind: str, what: str) -> Iterator[None]:
        self.enter(kind, what)
        try:
            yield
        finally:
            self.leave(kind, what)

    def enter(self, kind: str, what: str) -> None:
        """A wait of ``kind`` ("call", "timed" or "build") begins; for marks that cannot be a ``with`` block (a JIT's
        start and end events)."""

    def leave(self, kind: str, what: str) -> None:
        """The wait that :meth:`enter` began has ended."""
