"""Parsing Nsight Compute's raw CSV page (``--csv --page raw --print-units base``) into KernelMetrics.

The first row names the columns (identification columns, then one per metric), the second gives each metric's
unit, then one row per profiled kernel launch. Numbers may carry thousands separators; a metric the GPU did not
report is empty or ``n/a`` and is left out.
"""

from __future__ import annotations

import csv
import io

from kforge_core.records import KernelMetrics

DURATION = "gpu__time_duration.sum"
_NAME_COLUMNS = ("Kernel Name", "Function Name", "Demangled Name", "Name")


def _number(text: str) -> float | None:
    cleaned = text.strip().replace(",", "")
    if not cleaned or cleaned.lower() in ("n/a", "nan"):
        return None
    try:
        return float(cleaned)
    except ValueError:
        return None


def _rows(text: str) -> list[list[str]]:
    # ncu may print its own ==PROF== lines before the table: the table starts at the header row.
    lines = text.splitlines()
    start = next((i for i, line in enumerate(lines) if line.startswith('"ID"') or line.startswith("ID,")), None)
    if start is None:
        return []
    return list(csv.reader(io.StringIO("\n".join(lines[start:]))))


def parse_ncu_csv(text: str) -> tuple[KernelMetrics, ...]:
    """One KernelMetrics per profiled launch, in launch order; metric names keep ncu's names."""
    rows = _rows(text)
    if len(rows) < 2:
        return ()
    header, units, *launches = rows
    if units and units[0] not in ("", " "):  # some exports have no units row
        launches, units = [units, *launches], [""] * len(header)
    name_column = next((header.index(c) for c in _NAME_COLUMNS if c in header), None)
    kernels = []
    for row in launches:
        if len(row) != len(header):
            continue
        metrics: list[tuple[str, float | str]] = []
        for column, unit, value in zip(header, units, row):
            if "__" not in column:
                continue
            number = _number(value)
            if number is not None:
                metrics.append((column, number))
            elif value.strip() and value.strip().lower() != "n/a":
                metrics.append((column, value.strip()))
        duration_ns = dict(metrics).get(DURATION)
        name = row[name_column] if name_column is not None else "kernel"
        duration = duration_ns / 1000.0 if isinstance(duration_ns, float) else None
        kernels.append(KernelMetrics(name=name, duration_us=duration, metrics=tuple(metrics)))
    return tuple(kernels)
