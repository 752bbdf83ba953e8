"""The metal profile summary: its findings in words and the picture the analyst sees, fed by fixtures."""

from __future__ import annotations

import pytest
from metal_profile_fixture import fixture_kernels, write_metal_profile

from kforge_core.app import App
from kforge_core.records import ProfileResult
from kforge_metal.backend import METAL
from kforge_metal.metal_profile import MetalProfile
from kforge_metal.summary import summarize_metal


def test_kernels_are_timed_per_forward_and_ranked():
    rmsnorm, scale = fixture_kernels()
    assert (rmsnorm.name, rmsnorm.calls_per_forward, rmsnorm.us_per_call) == ("rmsnorm", 1.0, 182.5)
    assert rmsnorm.gbs == pytest.approx(32 * 2**20 / 182.5e-6 / 1e9)
    assert (scale.calls_per_forward, scale.threads, scale.group_size) == (2.0, (4096,), (256,))


def test_the_record_survives_its_file(tmp_path):
    profile = write_metal_profile(tmp_path)
    measured = MetalProfile.of(profile)
    assert measured.trace.pid == 4242 and measured.kernels == fixture_kernels()
    assert measured.median_forward_ms == 0.50
    forward, first, second = profile.kernels
    assert (forward.name, forward.duration_us) == ("ModelNew.forward", pytest.approx(500.0))
    assert first.metric("calls_per_forward") == 1.0 and second.name == "scale"


def test_the_summary_says_what_bounds_the_forward(tmp_path):
    summary = summarize_metal(write_metal_profile(tmp_path))
    text = summary.text
    assert text.startswith("Apple M3 Max, 40-core GPU: ModelNew.forward takes 0.500 ms (median of 5 forwards")
    assert "at least 128.0 MiB" in text and "268.4 GB/s at the median forward, 77% of the 350 GB/s" in text
    assert "1. rmsnorm: 1 dispatch(es) per forward, 182.5 us each (36% of the forward)" in text
    assert "grid 1048576, threadgroup 256" in text and "2. scale: 2 dispatch(es)" in text
    assert "the GPU was busy 65% of the 2.989 ms" in text and "longest idle gaps: 70.0 us" in text
    assert "BlitCopy: MPS:Float[4096, 4096] --> MPS:Float[4096, 4096]: 10 call(s), 0.120 ms" in text
    assert "The kernels account for 0.242 ms of the 0.500 ms forward" in text
    assert "aten::mul" in text and "aten::empty_like" not in text


def test_the_picture_is_a_png_next_to_the_profile(tmp_path):
    (image,) = summarize_metal(write_metal_profile(tmp_path)).images
    assert image.path == tmp_path / "metal_profile.png" and image.mime == "image/png"
    assert image.path.read_bytes()[:8] == b"\x89PNG\r\n\x1a\n" and image.path.stat().st_size > 10_000
    assert "GPU timeline" in image.caption
    without_trace = summarize_metal(write_metal_profile(tmp_path, trace=False))
    assert without_trace.images and "no Metal System Trace: xctrace not found" in without_trace.text
    assert summarize_metal(write_metal_profile(tmp_path, picture=False)).images == ()


def test_the_hook_answers_for_metal_profiles_only(tmp_path):
    hook = App().plugins.hook.kforge_summarize_profile
    summary = hook(backend=METAL, problem=None, profile=write_metal_profile(tmp_path))
    assert summary.images and "rmsnorm" in summary.text
    assert summarize_metal(ProfileResult(tool="metal")) is None  # the stage's record is missing
