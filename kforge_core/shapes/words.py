"""A shape plan and a candidate's outcomes at it, in words: for ``kforge check``, ``kforge eval``, the reports and
the generation prompt (one wording everywhere)."""

from __future__ import annotations

from ..records import ShapeCheck, ShapePlan, VariantOutcome

_SOURCE = {
    "declared": "declared by the problem (get_input_variants())",
    "derived": "derived by KForge (the problem declares none)",
    "none": "none",
}


def plan_lines(plan: ShapePlan) -> list[str]:
    """The plan: where its variants come from, each variant and why, each size left fixed and why, the notes."""
    lines = [f"shape variants: {_SOURCE[plan.source]}"]
    for variant in plan.variants:
        why = variant.why or "declared"
        weight = f"; {variant.weight:.0%} of served passes" if variant.weight else ""
        lines.append(f"  {variant.describe()}: {why}{weight}")
    if plan.own_weight:
        lines.append(f"  the problem's own shape: {plan.own_weight:.0%} of served passes")
    for fixed in plan.fixed:
        lines.append(f"  left fixed: {fixed.size} ({', '.join(fixed.where)}): {fixed.reason}")
    lines.extend(f"  {note}" for note in plan.notes)
    return lines


def outcome_words(outcome: VariantOutcome) -> str:
    """``held``, ``failed (numerical_mismatch): ...``, ``dropped: ...`` or ``not run``; the first line only."""
    first = outcome.message.strip().splitlines()[0] if outcome.message.strip() else ""
    if outcome.status == "failed":
        return f"failed ({outcome.failure.value if outcome.failure else '?'}): {first}"
    if outcome.status == "dropped":
        return f"dropped: {first}"
    return "held" if outcome.status == "held" else "not run (verification ended before it)"


def check_lines(check: ShapeCheck) -> list[str]:
    """The plan with a candidate's outcome at each variant: where the variants come from, then each variant, its
    outcome and why it was chosen, each size left fixed and why, the notes (harness.shapes in the header)."""
    outcomes = {o.variant: o for o in check.outcomes}
    plan = check.plan
    lines = [f"shape variants ({check.policy}): {_SOURCE[plan.source]}"]
    for variant in plan.variants:
        outcome = outcomes.get(variant.name)
        said = outcome_words(outcome) if outcome is not None else "not run"
        lines.append(f"  {variant.describe()}: {said}" + (f" [{variant.why}]" if variant.why else ""))
    lines.extend(f"  left fixed: {f.size} ({', '.join(f.where)}): {f.reason}" for f in plan.fixed)
    lines.extend(f"  {note}" for note in plan.notes)
    return lines


def prompt_words(plan: ShapePlan) -> str:
    """What the generation prompt says of the shapes the kernel must hold at ("" when none)."""
    if not plan.variants:
        return ""
    shapes = "; ".join(variant.describe() for variant in plan.variants)
    text = (f"Besides the inputs above, your kernel is checked at these inputs too: {shapes}. It must be correct at "
            "every one of them: take sizes from the tensors it is given (never hard-code them), cover the tails of "
            "tiles and blocks, and size grids from the inputs.")
    fixed = [f"{f.size} ({f.where[0]})" for f in plan.fixed if f.size > 1]
    if fixed:
        text += f" Sizes the model fixes (they do not change): {', '.join(fixed)}."
    return text
