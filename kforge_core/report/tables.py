"""Tables that stay readable in a narrow terminal (80 columns is common, and the width of piped output).

Cells are plain text, never markup, so a hint such as ``pip install 'kforge-cute[dsl]'`` shows its brackets; a
styled cell is a :class:`rich.text.Text`. Every column is always shown. A table whose columns fit the width is
drawn boxed, a folding column wrapping its text onto at most a few lines; one that would not fit is laid out
plainly instead, each row a block of ``header  value`` lines whose values wrap at spaces, so that no column is
dropped and no word is split.
"""

from __future__ import annotations

import math
from dataclasses import dataclass
from typing import Sequence, Union

from rich.console import Console, Group, RenderableType
from rich.table import Table
from rich.text import Text

Cell = Union[str, Text]
_EDGES = 4  # a boxed table's two outer borders and the padding beside them, less one column separator
_PER_COLUMN = 3  # a column's separator and its padding on both sides
_FOLDED_LINES = 3  # the most lines a folding column's widest cell may take in a boxed table


@dataclass(frozen=True)
class Column:
    header: str
    fold: bool = False  # long text wraps onto several lines; otherwise the column keeps its widest cell
    optional: bool = False  # the plain layout shows it after the others
    min_width: int = 12  # the narrowest a folding column may become


def _text(cell: Cell) -> Text:
    return cell if isinstance(cell, Text) else Text(cell)


def _needed(column: Column, cells: Sequence[Text]) -> int:
    """A column's width in a boxed table: its widest cell; a folding one's, enough for its longest word (never
    split) and for its widest cell in a few lines."""
    widest = max([Text(column.header).cell_len, *(c.cell_len for c in cells)])
    if not column.fold:
        return widest
    longest_word = max([len(word) for c in cells for word in c.plain.split()] or [0])
    return min(widest, max(column.min_width, longest_word, math.ceil(widest / _FOLDED_LINES)))


def fitted_table(columns: Sequence[Column], rows: Sequence[Sequence[Cell]], width: int, title: str | None = None
                 ) -> RenderableType:
    """``rows`` (one cell per column) as a boxed table when it fits ``width`` terminal columns, else plainly."""
    cells = [[_text(cell) for cell in row] for row in rows]
    needed = [_needed(c, [row[i] for row in cells]) for i, c in enumerate(columns)]
    if _EDGES + sum(n + _PER_COLUMN for n in needed) > width:
        return _plain(columns, cells, title, width)
    table = Table(title=Text(title) if title is not None else None)
    for column, least in zip(columns, needed):
        table.add_column(column.header, overflow="fold", no_wrap=not column.fold, min_width=least)
    for row in cells:
        table.add_row(*row)
    return table


def _plain(columns: Sequence[Column], cells: list[list[Text]], title: str | None, width: int) -> RenderableType:
    """Each row a block: the columns' headers on the left, their values on the right, wrapped at spaces (a word
    longer than the line is folded); the optional columns last."""
    order = [i for i, c in enumerate(columns) if not c.optional] + [i for i, c in enumerate(columns) if c.optional]
    label_width = max(Text(columns[i].header).cell_len for i in order)
    value_width = max(width - label_width - 2, 20)
    wrapper = Console(width=value_width)
    lines: list[Text] = [Text(title)] if title is not None else []
    for number, row in enumerate(cells):
        if number:
            lines.append(Text(""))
        for i in order:
            label = columns[i].header.ljust(label_width)
            for part in row[i].wrap(wrapper, value_width, overflow="fold") or [Text("")]:
                part.rstrip()
                lines.append(Text.assemble((label, "dim"), "  ", part) if part.plain else Text(label.rstrip(), "dim"))
                label = " " * label_width
    return Group(*lines)
