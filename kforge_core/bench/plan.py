"""What a bench is asked to do: the suite and its filters, the backend, what is evaluated (solutions or the agent
loop) and the settings; stored with the bench, so ``kforge bench --resume`` continues exactly that bench. Where
it runs (the executor, the devices) is not part of it: a resumed bench may run elsewhere."""

from __future__ import annotations

import dataclasses
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from ..config import parse_table
from ..settings import Settings
from ..codec import to_json


@dataclass(frozen=True)
class BenchPlan:
    """:param solutions: the solutions' directory or JSONL file; None runs the agent loop (``settings.llm``).
    :param measure: False checks correctness only (``--no-timing``).
    :param digests: each selected problem's key and the hash of its file when the bench started."""

    suite: Path
    filters: tuple[str, ...]
    backend: str
    solutions: Path | None
    entry: str
    measure: bool
    settings: Settings
    digests: tuple[tuple[str, str], ...]

    @property
    def source(self) -> str:
        if self.solutions is not None:
            return f"solutions:{self.solutions}"
        analyst = self.settings.llm.analyst_model
        return f"llm:{self.settings.llm.model}" + (f" (analyst {analyst})" if analyst else "")

    @property
    def keys(self) -> list[str]:
        return [key for key, _ in self.digests]

    def to_json(self) -> dict[str, Any]:
        table = to_json(self.settings)
        table.pop("sources", None)
        return {"suite": str(self.suite), "filters": list(self.filters), "backend": self.backend,
                "solutions": str(self.solutions) if self.solutions is not None else None, "entry": self.entry,
                "measure": self.measure, "settings": table, "digests": [list(d) for d in self.digests]}

    @classmethod
    def from_json(cls, data: dict[str, Any], *, source: str) -> BenchPlan:
        settings = parse_table(Settings, data["settings"], where="", source=source)
        return cls(Path(data["suite"]), tuple(data["filters"]), data["backend"],
                   Path(data["solutions"]) if data["solutions"] else None, data["entry"], bool(data["measure"]),
                   settings, tuple((key, digest) for key, digest in data["digests"]))


def absolute_settings(settings: Settings) -> Settings:
    """The settings with their directories absolute: slots on other processes and hosts read them as meant."""
    return dataclasses.replace(
        settings, runs_dir=settings.runs_dir.resolve(), cache_dir=settings.cache_dir.resolve(),
        prompts_dir=settings.prompts_dir.resolve() if settings.prompts_dir is not None else None,
    )
