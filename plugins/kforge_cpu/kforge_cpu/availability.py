"""Whether the ``cpu`` backend runs here: it does wherever Numba imports."""

from __future__ import annotations

from typing import Any

from kforge_core.hookspecs import hookimpl
from kforge_core.records import Availability, Backend

from .backend import cpu_options
from .machine import read_machine_facts


@hookimpl
def kforge_backend_availability(backend: Backend, options: Any) -> Availability | None:
    try:
        import numba
    except Exception as exc:  # a missing or broken Numba is an answer, not a crash
        return Availability.no(f"numba cannot be imported ({type(exc).__name__}: {exc}); pip install numba")
    threads = cpu_options(options).threads or numba.config.NUMBA_NUM_THREADS
    simd = read_machine_facts().simd
    return Availability.yes(f"Numba {numba.__version__}, {threads} threads, {simd.name}")
