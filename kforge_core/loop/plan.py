"""What a run is asked to do: the problem, backend, models, reference and settings, stored with the run so that
``kforge run --resume`` continues exactly the run that was started, from any directory.
"""

from __future__ import annotations

import dataclasses
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from ..agents import Reference
from ..config import parse_table
from ..errors import KForgeError
from ..llm import ModelSpec, parse_model_spec
from ..llm.corpus import corpus_spec_text
from ..records import SourceFile
from ..report import RunReport
from ..retrieval import RetrievedReference, retrieve_references
from ..settings import Settings
from ..store import RunStore
from ..codec import record_from_json, to_json
from .user_images import checked_image_paths


@dataclass(frozen=True)
class RunPlan:
    """What a run was asked to do."""

    problem_path: Path
    backend: str
    model: str
    analyst_model: str
    reference: Reference | None
    settings: Settings
    references: tuple[RetrievedReference, ...] = ()  # retrieved from the kernel index when the run was planned

    def to_json(self) -> dict[str, Any]:
        table = to_json(self.settings)
        table.pop("sources", None)
        return {
            "problem_path": str(self.problem_path), "backend": self.backend, "model": self.model,
            "analyst_model": self.analyst_model, "settings": table,
            "reference": to_json(self.reference) if self.reference is not None else None,
            "references": [to_json(r) for r in self.references],
        }

    @classmethod
    def from_json(cls, data: dict[str, Any], *, source: str, budget: dict[str, Any]) -> RunPlan:
        table = dict(data["settings"])
        table["budget"] = {**table.get("budget", {}), **budget}
        settings = parse_table(Settings, table, where="", source=source)
        reference = record_from_json(Reference, data["reference"]) if data.get("reference") else None
        references = tuple(record_from_json(RetrievedReference, r) for r in data.get("references", []))
        return cls(Path(data["problem_path"]), data["backend"], data["model"], data["analyst_model"], reference,
                   settings, references)


def absolute_model_spec(spec: ModelSpec) -> str:
    """The spec as a run keeps it: a replay script or a corpus by its absolute path, so a resumed run finds it from
    any directory."""
    if spec.provider == "corpus":
        directory, _, query = spec.model.partition("?")
        return f"corpus:{corpus_spec_text(Path(directory), query)}"
    return f"replay:{Path(spec.model).resolve()}" if spec.provider == "replay" else str(spec)


def plan_run(
    settings: Settings, problem_path: Path, *, store: RunStore, reference_file: Path | None = None,
    reference_run: str | None = None,
) -> RunPlan:
    model = absolute_model_spec(parse_model_spec(settings.llm.model, setting="llm.model (--llm)"))
    analyst_text = settings.llm.analyst_model or settings.llm.model
    analyst = absolute_model_spec(parse_model_spec(analyst_text, setting="llm.analyst_model (--analyst-llm)"))
    if settings.prompts_dir is not None:
        settings = dataclasses.replace(settings, prompts_dir=settings.prompts_dir.resolve())
    if settings.analysis.images:
        images = checked_image_paths(settings.analysis.images)
        settings = dataclasses.replace(settings, analysis=dataclasses.replace(settings.analysis, images=images))
    reference = None
    if reference_file is not None:
        reference = reference_from_file(reference_file, settings.backend)
    elif reference_run is not None:
        reference = reference_from_run(store, reference_run, settings.harness.precision)
    references: tuple[RetrievedReference, ...] = ()
    if settings.retrieval.references == "auto":
        references = retrieve_references(settings.runs_dir, problem_path, settings.backend,
                                         settings.harness.precision, settings.retrieval.top_k,
                                         settings.retrieval.embed_model)
    return RunPlan(problem_path.resolve(), settings.backend, model, analyst, reference, settings, references)


def reference_from_file(path: Path, backend: str) -> Reference:
    if not path.is_file():
        raise KForgeError(f"reference file not found: {path}")
    return Reference(
        label=path.name,
        note=f"It solves this same problem and is known to work, possibly on another backend. Use its algorithm "
             f"and ideas; write your candidate for {backend} in this backend's programming model.",
        files=(SourceFile(path.name, path.read_text()),), entry=path.name,
    )


def reference_from_run(store: RunStore, run_id: str, precision: str) -> Reference:
    """The best kernel of run ``run_id``, for a run under the ``precision`` contract; its speedups are labelled with
    the contract they were measured under, and a different contract is said."""
    report = RunReport.from_store(store, run_id)
    best = report.best
    if best is None or best.candidate is None or best.outcome is None:
        raise KForgeError(f"run {run_id} has no correct candidate to use as a reference")
    speedups = ", ".join(f"{v:.2f}x vs {n}" for n, v in best.outcome.speedups)
    theirs = report.contract
    note = f"It passed verification on the {report.run.backend} backend. Use its algorithm and ideas."
    if theirs.name != precision:
        note += (f" It was held to the {theirs.name} precision contract (it may compute in {theirs.computes_in}); "
                 f"this run's contract is {precision}, so keep to what {precision} allows.")
    return Reference(
        label=f"the best kernel of run {run_id} ({report.run.backend}, {speedups}, {theirs.name} contract)",
        note=note, files=best.candidate.files, entry=best.candidate.entry,
    )
