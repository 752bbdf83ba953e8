"""Screenshots the user gives the analyst (``--profile-image``, ``[analysis] images``): checked when the run is
planned, kept in the run directory, sent with every analysis prompt after the profile's own images, and the same
pictures again when the run is resumed."""

from __future__ import annotations

import dataclasses
import shutil

import pytest
from loop_helpers import PROBLEM, RecordingProgress, code_reply, toy_app, toy_settings, write_script
from test_loop_flow import analysis, gen

from kforge_core.errors import KForgeError
from kforge_core.loop.session import plan_run, resume_run, start_run
from kforge_core.records import Image, ProfileSummary
from kforge_core.settings import AnalysisSettings
from kforge_core.store import RunStore


def settings_with_images(tmp_path, script, images, **budget):
    settings = toy_settings(tmp_path, script, **budget)
    return dataclasses.replace(settings, analysis=AnalysisSettings(images=tuple(images)))


def test_user_screenshots_follow_the_profile_images_in_every_analysis_and_survive_a_resume(tmp_path, scripted, png):
    shot = tmp_path / "xcode" / "gpu capture.png"
    shot.parent.mkdir()
    shutil.copyfile(png, shot)
    scripted.summary = ProfileSummary(text="see the roofline", images=(Image(png, "roofline"),))
    expect = {"images": ["roofline", "image-1-gpu capture.png"],
              "contains": ["Attached image 1: roofline",
                           "Attached image 2: a screenshot supplied by the user (gpu capture.png)"]}
    script = write_script(tmp_path / "s.jsonl", [
        gen(code_reply("ms=8.0")), analysis(expect=expect), gen(code_reply("ms=4.0")),
        analysis(expect=expect), gen(code_reply("ms=3.0")),
    ])
    settings = settings_with_images(tmp_path, script, [shot], optimization_rounds=2, max_llm_calls=3)
    with RunStore(settings.runs_dir) as store:
        plan = plan_run(settings, PROBLEM, store=store)
        first = start_run(toy_app(), plan, store, RecordingProgress(), evaluator_factory=scripted.factory())
    assert "budget of 3 LLM calls" in first.stop_reason
    run_dir = first.outputs.report.run_dir
    kept = run_dir / "inputs" / "image-1-gpu capture.png"
    assert kept.read_bytes() == png.read_bytes()
    assert (sorted(run_dir.glob("steps/*-analysis-o1/prompt-image-2.png"))[0].read_bytes() == png.read_bytes())

    shot.unlink()  # the resumed run shows the copy it kept
    with RunStore(settings.runs_dir) as store:
        resumed = resume_run(toy_app(), store, first.run_id, RecordingProgress(), budget={"max_llm_calls": 10},
                             evaluator_factory=scripted.factory())
    assert resumed.outputs.report.best.label == "o2.1"
    assert len(list(run_dir.glob("steps/*-analysis-o2/prompt-image-*.png"))) == 2


def test_a_screenshot_that_is_missing_or_not_an_image_stops_the_run_before_it_starts(tmp_path, png):
    script = write_script(tmp_path / "s.jsonl", [gen(code_reply("ms=8.0"))])
    notes = tmp_path / "notes.txt"
    notes.write_text("not a picture")
    for images, message in (([tmp_path / "nowhere.png"], "profile image not found"),
                            ([png, notes], "is not a .png, .jpg, .jpeg, .gif, .webp file")):
        settings = settings_with_images(tmp_path, script, images)
        with RunStore(settings.runs_dir) as store, pytest.raises(KForgeError, match=message):
            plan_run(settings, PROBLEM, store=store)
