"""Shape variants KForge derives for a problem that declares none.

Every size of the inputs (equal sizes together: ``symbols.py``) is tried at another value while the others stay:
the size is free when the reference runs there and its outputs follow (an output that had the size takes the new
one, not its old one: a reference that reshapes to a constant batch does not follow). A size that is not free stays
fixed, with the reason and what pins it (an ``__init__`` argument, a parameter of that size); one shared by chance
between a batch and a width is tried again axis by axis. The free sizes then make the variants:

* ``half``: every free size halved;
* ``prime``: every free size at the largest prime below it (no multiple of any tile);
* ``double``: every free size doubled, or the leading one alone where that would take more memory than the
  problem's own shape (beyond :data:`SMALL_BYTES`), or none.

Each variant is kept only where the reference runs at it (checked here on meta tensors; the referee runs it again
before judging, and drops what fails there).
"""

from __future__ import annotations

from typing import Any, Iterator

from ..records import FixedDimension, ShapePlan, ShapeVariant, ValueSpec
from ..tracebacks import exception_line
from .probe import Probe
from .sizes import doubled, halved, prime_below
from .symbols import Symbol, resized, symbols_of

# a doubled variant may take more memory than the problem's own shape only while both stay below this: an
# evaluation keeps this much of timing inputs resident anyway
SMALL_BYTES = 64 << 20
_MIB = 1 << 20


def derived_plan(probe: Probe, inputs: tuple[ValueSpec, ...], where: str) -> ShapePlan:
    """The variants derived from ``probe`` (its device is ``where`` the reference was run: "meta tensors", "the
    CPU"), the sizes left fixed and why."""
    free, fixed = _free_and_fixed(probe)
    variants, notes = [], []
    for name, sizer, why in (("half", halved, "every free size halved"),
                             ("prime", prime_below, "every free size at the largest prime below it, no multiple of "
                                                    "any tile")):
        changes = [(s, sizer(s.size)) for s in free if sizer(s.size) is not None]
        made = _variant(probe, inputs, name, changes, why, notes)
        if made is not None and all(made.inputs != v.inputs for v in variants):
            variants.append(made)
    double = _double(probe, inputs, free, notes)
    if double is not None:
        variants.append(double)
    if free:
        notes.append(f"each variant checked by running the reference at it on {where}")
    return ShapePlan("derived", tuple(variants), tuple(fixed), tuple(notes))


def _free_and_fixed(probe: Probe) -> tuple[list[Symbol], list[FixedDimension]]:
    free, fixed = [], []
    for symbol in symbols_of(probe.shapes):
        if symbol.size < 2:
            fixed.append(_fixed(probe, symbol, "size 1: a broadcast or single-item dimension, nothing to vary"))
            continue
        reason = _tried(probe, symbol)
        if reason is None:
            free.append(symbol)
            continue
        parts = symbol.by_axis()
        if len(parts) == 1:
            fixed.append(_fixed(probe, symbol, reason + _pins(probe, symbol.size)))
            continue
        for part in parts:
            part_reason = _tried(probe, part)
            if part_reason is None:
                free.append(part)
            else:
                fixed.append(_fixed(probe, part, part_reason + _pins(probe, part.size)))
    return free, fixed


def _tried(probe: Probe, symbol: Symbol) -> str | None:
    """None when the reference runs with ``symbol`` at another size and its outputs follow; else why not."""
    size = halved(symbol.size) if symbol.size >= 4 else doubled(symbol.size)
    return _runs(probe, [(symbol, size)])[2]


def _runs(probe: Probe, changes: list[tuple[Symbol, int]]) -> tuple[list[ValueSpec], int, str | None]:
    """The reference's outputs and the bytes of a call at ``changes``, and None; or why the reference does not run
    there (or its outputs do not follow)."""
    try:
        outputs, size = probe.at(resized(probe.shapes, changes))
    except Exception as exc:  # noqa: BLE001 - whatever the reference raises says why the size is pinned
        return [], 0, f"the reference fails when it changes ({exception_line(exc)})"
    return outputs, size, _does_not_follow(probe.output_shapes, [o.shape for o in outputs],
                                           {s.size: new for s, new in changes})


def _does_not_follow(own: list[tuple[int, ...]], now: list[tuple[int, ...]], changed: dict[int, int]) -> str | None:
    """Why the outputs at the changed sizes do not follow the inputs (None: they do). An output dimension that had
    a changed size must take its new size somewhere, not keep the old one alone."""
    if len(own) != len(now):
        return f"the reference returns {len(now)} outputs there instead of {len(own)}"
    for index, (before, after) in enumerate(zip(own, now)):
        if len(before) != len(after):
            return f"output {index} has {len(after)} dimensions there instead of {len(before)}"
        for old, new in changed.items():
            if old in before and old in after and new not in after:
                return (f"the reference's output {index} keeps the size {old} ({list(after)}) where the input's "
                        f"became {new}: its shape does not follow the input's")
    return None


def _variant(probe: Probe, inputs: tuple[ValueSpec, ...], name: str, changes: list[tuple[Symbol, int]],
             why: str, notes: list[str]) -> ShapeVariant | None:
    if not changes:
        return None
    outputs, _, failed = _runs(probe, changes)
    if failed is not None:
        notes.append(f"no {name} variant: {failed}")
        return None
    return _made(probe, inputs, name, changes, why, outputs)


def _double(probe: Probe, inputs: tuple[ValueSpec, ...], free: list[Symbol], notes: list[str]
            ) -> ShapeVariant | None:
    """Every free size doubled, or the leading one alone, within the memory the problem's own shape takes (or
    :data:`SMALL_BYTES`)."""
    if not free:
        return None
    allowed = max(probe.own_bytes, SMALL_BYTES)
    leading = next((s for s in free if any(d.leaf == 0 and d.axis == 0 for d in s.dims)), free[0])
    tries = [(free, "every free size doubled"), ([leading], "the leading free size doubled")]
    for symbols, why in (tries if len(free) > 1 else tries[:1]):
        changes = [(s, doubled(s.size)) for s in symbols]
        outputs, size, failed = _runs(probe, changes)
        if failed is not None:
            notes.append(f"no double variant ({why}): {failed}")
            continue
        if size <= allowed:
            return _made(probe, inputs, "double", changes, why, outputs)
        notes.append(f"no double variant ({why}): one call would take {size / _MIB:.1f} MiB, more than the "
                     f"problem's own {probe.own_bytes / _MIB:.1f} MiB")
    return None


def _made(probe: Probe, inputs: tuple[ValueSpec, ...], name: str, changes: list[tuple[Symbol, int]],
          why: str, outputs: list[ValueSpec]) -> ShapeVariant:
    shapes = iter(resized(probe.shapes, changes))
    described = tuple(_reshaped(spec, shapes) for spec in inputs)
    sizes = tuple((s.size, new) for s, new in changes)
    said = ", ".join(f"{s.size} -> {new} ({_where(probe, s)})" for s, new in changes)
    return ShapeVariant(name, described, "derived", f"{why}: {said}", sizes, tuple(outputs))


def _reshaped(spec: ValueSpec, shapes: Any) -> ValueSpec:
    """``spec`` with each tensor inside it at the next of ``shapes``."""
    import dataclasses

    if spec.kind == "tensor":
        return dataclasses.replace(spec, shape=next(shapes))
    if spec.kind in ("tuple", "list", "dict"):
        return dataclasses.replace(spec, items=tuple(_reshaped(item, shapes) for item in spec.items))
    return spec


def _fixed(probe: Probe, symbol: Symbol, reason: str) -> FixedDimension:
    return FixedDimension(symbol.size, tuple(_places(probe, symbol)), reason)


def _where(probe: Probe, symbol: Symbol) -> str:
    places = _places(probe, symbol)
    return ", ".join(places[:3]) + (f" and {len(places) - 3} more" if len(places) > 3 else "")


def _places(probe: Probe, symbol: Symbol) -> list[str]:
    """Where ``symbol``'s size is in the inputs: ``x dim 0``, ..."""
    return [f"{probe.labels[d.leaf]} dim {d.axis}" for d in symbol.dims]


def _pins(probe: Probe, size: int) -> str:
    """What in the model holds ``size``: its ``__init__`` arguments and its parameters and buffers of that size."""
    found = [f"__init__ argument {path} is {size}" for path, value in _ints(probe.init_inputs) if value == size]
    model = probe.model
    if hasattr(model, "named_parameters"):
        tensors = [*model.named_parameters(), *model.named_buffers()]
        found += [f"{name} {list(t.shape)} has this size" for name, t in tensors if size in tuple(t.shape)]
    if not found:
        return ""
    return "; " + "; ".join(found[:3]) + (f" (and {len(found) - 3} more)" if len(found) > 3 else "")


def _ints(values: list[Any]) -> list[tuple[str, int]]:
    """Every int inside ``values`` (nested in tuples, lists, dicts and ``torch.Size``), with where it is (``1``,
    ``2[0]``)."""
    return [found for index, value in enumerate(values) for found in _ints_in(value, str(index))]


def _ints_in(value: Any, at: str) -> Iterator[tuple[str, int]]:
    if isinstance(value, bool):
        return
    if isinstance(value, int):
        yield at, value
    elif isinstance(value, (tuple, list)):
        for i, item in enumerate(value):
            yield from _ints_in(item, f"{at}[{i}]")
    elif isinstance(value, dict):
        for key, item in value.items():
            yield from _ints_in(item, f"{at}[{key!r}]")
