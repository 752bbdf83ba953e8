"""What already rejects the candidate a worker serves, for a stage to ask between its steps: the worker says how it
is found (:func:`watch`, when the candidate is begun), verification asks once the candidate is built and before its
first trial runs (:func:`blocking_now`). Outside a harness worker (a plugin's own tool) nothing is watched."""

from __future__ import annotations

from typing import Callable

from ...records import Flag

_watches: list[Callable[[], list[Flag]]] = []


def watch(blocking: Callable[[], list[Flag]]) -> None:
    """From now on, :func:`blocking_now` answers with ``blocking()`` (the flags that block, found so far)."""
    _watches[:] = [blocking]


def blocking_now() -> list[Flag]:
    """The blocking flags the candidate has earned so far (none where nothing is watched)."""
    return _watches[0]() if _watches else []
