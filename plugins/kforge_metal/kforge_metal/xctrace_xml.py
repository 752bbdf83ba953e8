"""Reading what ``xctrace export`` writes: the table of contents (``--toc``) and one table (``--xpath``).

A table comes as ``<trace-query-result><node><schema name="...">`` with one ``<col>`` per column (its
``<mnemonic>`` names it), then one ``<row>`` per record whose child elements are the cells in column order. A
value that appeared before is written once with ``id="N"`` and later as an empty element with ``ref="N"``; a
cell's value is its text, else its ``fmt`` attribute; composite cells (a process) hold child elements (its pid).
An empty ``<sentinel/>`` cell is a missing value.
"""

from __future__ import annotations

import xml.etree.ElementTree as ET
from dataclasses import dataclass, field


class ExportError(ValueError):
    """The document is not an ``xctrace export`` result of the expected kind."""


@dataclass(frozen=True)
class Table:
    """One exported table: its schema name, its column mnemonics and its rows (cells resolved)."""

    schema: str
    columns: tuple[str, ...]
    rows: tuple[dict[str, ET.Element | None], ...]
    ids: dict[str, ET.Element] = field(default_factory=dict, repr=False, compare=False)

    def pid(self, cell: ET.Element | None) -> int | None:
        """The pid inside a process cell (``<process fmt="python3.12 (4242)"><pid>4242</pid></process>``)."""
        if cell is None:
            return None
        pid = cell.find(".//pid")
        if pid is not None and pid.get("ref") is not None:
            pid = self.ids.get(pid.get("ref"))
        return number(pid)


def parse_table(document: str) -> Table:
    try:
        root = ET.fromstring(document)
    except ET.ParseError as exc:
        raise ExportError(f"not XML: {exc}") from None
    schema = root.find(".//schema")
    if schema is None:
        raise ExportError("no <schema> in the export (an xpath that matched no table?)")
    columns = tuple((col.findtext("mnemonic") or "").strip() for col in schema.findall("col"))
    by_id = {element.get("id"): element for element in root.iter() if element.get("id") is not None}

    def resolve(element: ET.Element) -> ET.Element | None:
        if element.tag == "sentinel":
            return None
        ref = element.get("ref")
        return by_id.get(ref) if ref is not None else element

    rows = []
    for row in root.iter("row"):
        cells = [resolve(child) for child in row]
        rows.append({name: cells[i] if i < len(cells) else None for i, name in enumerate(columns)})
    return Table(schema.get("name", ""), columns, tuple(rows), by_id)


def text(cell: ET.Element | None) -> str:
    """A cell's value as text: its own text, else its ``fmt`` attribute (for a composite cell, its ``fmt``)."""
    if cell is None:
        return ""
    own = (cell.text or "").strip()
    return own or cell.get("fmt", "").strip()


def number(cell: ET.Element | None) -> int | None:
    """A cell's integer value (times and durations are integers of nanoseconds)."""
    value = (cell.text or "").strip() if cell is not None else ""
    try:
        return int(value)
    except ValueError:
        return None


@dataclass(frozen=True)
class TraceToc:
    """What ``xctrace export --toc`` says about run 1: the launched process and the tables recorded."""

    launched_pid: int | None
    launched_name: str
    schemas: tuple[str, ...]
    template: str = ""
    end_reason: str = ""


def parse_toc(document: str) -> TraceToc:
    try:
        root = ET.fromstring(document)
    except ET.ParseError as exc:
        raise ExportError(f"not XML: {exc}") from None
    if root.tag != "trace-toc":
        raise ExportError(f"expected <trace-toc>, got <{root.tag}>")
    run = root.find("run")
    if run is None:
        raise ExportError("the trace has no run")
    process = run.find("./info/target/process")
    pid = process.get("pid") if process is not None else None
    return TraceToc(
        launched_pid=int(pid) if pid and pid.isdigit() else None,
        launched_name=process.get("name", "") if process is not None else "",
        schemas=tuple(table.get("schema", "") for table in run.findall("./data/table")),
        template=(run.findtext("./info/summary/template-name") or "").strip(),
        end_reason=(run.findtext("./info/summary/end-reason") or "").strip(),
    )
