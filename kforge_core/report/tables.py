"""Tables that stay readable in a narrow terminal (80 columns is common, and the width of piped output).

Cells are plain text, never markup, so a hint such as ``pip install 'kforge-cute[dsl]'`` shows its brackets; a
styled cell is a :class:`rich.text.Text`. Where the columns cannot all fit, the optional ones are dropped (the last
named first) rather than squeezed to nothing; the identifying columns always stay and fold their text instead.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Sequence, Union

from rich.table import Table
from rich.text import Text

Cell = Union[str, Text]
_EDGES = 4  # a boxed table's two outer borders and the padding beside them, less one column separator
_PER_COLUMN = 3  # a column's separator and its padding on both sides


@dataclass(frozen=True)
class Column:
    header: str
    fold: bool = False  # long text wraps onto several lines; otherwise the column keeps its widest cell
    optional: bool = False  # dropped when the table would not fit otherwise
    min_width: int = 12  # the narrowest a folding column may become before optional columns are dropped


def _text(cell: Cell) -> Text:
    return cell if isinstance(cell, Text) else Text(cell)


def _needed(column: Column, cells: Sequence[Text]) -> int:
    widest = max([Text(column.header).cell_len, *(c.cell_len for c in cells)])
    return min(widest, column.min_width) if column.fold else widest


def fitted_table(columns: Sequence[Column], rows: Sequence[Sequence[Cell]], width: int, title: str | None = None
                 ) -> Table:
    """A table of ``rows`` (one cell per column) that fits ``width`` terminal columns."""
    cells = [[_text(cell) for cell in row] for row in rows]
    kept = list(range(len(columns)))
    needed = [_needed(c, [row[i] for row in cells]) for i, c in enumerate(columns)]
    optional = [i for i, c in enumerate(columns) if c.optional]
    while optional and _EDGES + sum(needed[i] + _PER_COLUMN for i in kept) > width:
        kept.remove(optional.pop())
    table = Table(title=Text(title) if title is not None else None)
    for i in kept:
        table.add_column(columns[i].header, overflow="fold", no_wrap=not columns[i].fold, min_width=needed[i])
    for row in cells:
        table.add_row(*(row[i] for i in kept))
    return table
