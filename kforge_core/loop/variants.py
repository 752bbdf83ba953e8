"""How a round's candidates differ by construction, not by chance (``loop.width`` > 1).

- In an optimization round, candidate m follows its own recommendation: the candidates are spread over the parents
  (``loop.keep``) first and then over each parent's analysis, recommendation 1, 2, 3 in turn; where there are more
  candidates than recommendations, later ones follow one again and are told to carry it out another way.
- In the functional pass, candidate m takes its own approach from :data:`APPROACHES` and, where the kernel index
  gave references, starts from its own one of them.
- Candidate m (from 1) asks at ``[llm] temperature + (m - 1) * loop.temperature_step`` (at most 1), where the
  provider takes a temperature per request.

A candidate keeps its place (``member``) through the round's repairs: a failed one is repaired from its own
feedback, with the same recommendation and parent.
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from typing import Any, Sequence

from ..agents import RetrievedReference
from ..store.attempts import Place

APPROACHES = (
    "the most direct correct implementation: the reference's operations one by one",
    "as few passes over memory as possible: fuse the operations into as few kernels as the backend allows",
    "the memory access pattern first: contiguous, vectorised access and tiles that reuse what was loaded",
    "as much parallel work as the device offers: split the work evenly over all of its units",
)
_ITEM = re.compile(r"^\s{0,3}(?:#{1,4}\s*)?(?:\*\*)?(?:Recommendation\s+)?(\d{1,2})[.):]\s*", re.I | re.M)


@dataclass(frozen=True)
class Lineage:
    """One candidate's place in its round: ``member`` (0 when the round has one candidate), the parent it
    improves (an index into the round's parents), what it follows, and the text its prompt carries about it."""

    member: int
    parent: int = 0
    follows: str = ""
    variant: str | None = None
    parent_label: str = ""

    def tree(self, place: Place, repair: bool) -> dict[str, Any]:
        """What the generation step keeps for the search tree."""
        follows = f"repair of {Place(place.pass_kind, place.round, place.attempt - 1, place.member).label}" \
            if repair else self.follows
        return {"member": self.member, "parent": self.parent_label or None, "follows": follows}


def split_recommendations(text: str) -> list[str]:
    """The analyst's numbered recommendations (``1. ...``, ``### 2) ...``, ``**Recommendation 3:**``), each with
    its text; the whole reply as one when it is not numbered."""
    starts = list(_ITEM.finditer(text))
    if len(starts) < 2:
        return [text.strip()]
    items = []
    for here, after in zip(starts, [*starts[1:], None]):
        items.append(text[here.start():after.start() if after else len(text)].strip())
    return items


def _first_line(text: str) -> str:
    line = next((line.strip() for line in text.splitlines() if line.strip()), "")
    line = _ITEM.sub("", line).strip("*# ")
    return line[:100] + ("..." if len(line) > 100 else "")


def functional_lineages(width: int, references: Sequence[RetrievedReference]) -> list[Lineage]:
    if width == 1:
        return [Lineage(0)]
    lineages = []
    for m in range(width):
        approach = APPROACHES[m % len(APPROACHES)]
        text = (f"You write candidate {m + 1} of {width} that are written at once for this problem; each takes its "
                f"own approach. Yours: {approach}.")
        if m >= len(APPROACHES):
            text += " Another candidate takes this approach too: carry it out differently."
        follows = approach.split(":")[0]
        if references:
            reference = references[m % len(references)]
            text += f" Start from the retrieved kernel {reference.label}."
            follows += f"; from {reference.label}"
        lineages.append(Lineage(m + 1, follows=follows, variant=text))
    return lineages


def optimization_lineages(width: int, parents: Sequence[str], recommendations: Sequence[str]) -> list[Lineage]:
    """The round's candidates over ``parents`` (their labels) and each one's ``recommendations``."""
    if width == 1 and len(parents) == 1:
        return [Lineage(0, 0, "the recommendations", None, parents[0])]
    items = [split_recommendations(text) for text in recommendations]
    lineages = []
    for m in range(width):
        p = m % len(parents)
        turn = m // len(parents)
        own = items[p]
        number = turn % len(own) + 1
        text = (f"You write candidate {m + 1} of {width} that improve {parents[p]} at once. Follow recommendation "
                f"{number} of the analyst's" + (f" ({_first_line(own[number - 1])})" if len(own) > 1 else "")
                + "; the other candidates follow the others.")
        if turn >= len(own):
            text += " Another candidate follows this recommendation too: carry it out differently."
        follows = f"recommendation {number} of {parents[p]}'s analysis" if len(own) > 1 else \
            f"{parents[p]}'s analysis"
        lineages.append(Lineage(m + 1, p, follows, text, parents[p]))
    return lineages


def temperature_of(member: int, base: float, step: float) -> float | None:
    """Candidate ``member``'s temperature; None for the only one (the configured temperature)."""
    if member <= 1:
        return None
    return min(1.0, base + (member - 1) * step)
