"""Records check themselves, so a plugin returning something malformed fails where it did so."""

from __future__ import annotations

import pickle

import pytest

from kforge_core import (
    Availability, Backend, Candidate, CompileResult, Example, Failure, Flag, Lowering, ProfileSummary, SourceFile,
    VerifyResult,
)
from kforge_core.records import options_hash


def test_backend_names_are_checked():
    with pytest.raises(ValueError, match="Backend: name 'My Backend' must match"):
        Backend(name="My Backend", programming_model="x", device="cpu")
    with pytest.raises(ValueError, match="options_type .* is not a dataclass"):
        Backend(name="ok", programming_model="x", device="cpu", options_type=dict)


def test_unavailable_needs_a_reason():
    with pytest.raises(ValueError, match="must say why"):
        Availability(False)
    assert Availability.no("nvcc not found").reason == "nvcc not found"


def test_candidate_files_stay_inside_their_directory():
    with pytest.raises(ValueError, match="must be a relative path inside the candidate directory"):
        SourceFile("../escape.py", "")
    with pytest.raises(ValueError, match="entry 'model_new.py' is not among the files"):
        Candidate(files=(SourceFile("kernel.cu", ""),))


def test_candidate_digest_covers_every_file(tmp_path):
    a = Candidate(files=(SourceFile("model_new.py", "x"), SourceFile("kernel.cu", "k1")))
    b = Candidate(files=(SourceFile("kernel.cu", "k1"), SourceFile("model_new.py", "x")))
    c = Candidate(files=(SourceFile("model_new.py", "x"), SourceFile("kernel.cu", "k2")))
    assert a.digest == b.digest != c.digest
    entry = a.write_to(tmp_path)
    assert entry == tmp_path / "model_new.py" and (tmp_path / "kernel.cu").read_text() == "k1"


def test_results_are_consistent_about_failure():
    with pytest.raises(ValueError, match="failure must be set exactly when ok is False"):
        CompileResult(ok=False)
    with pytest.raises(ValueError, match="failure must be set exactly when correct is False"):
        VerifyResult(correct=True, failure=Failure.MISMATCH)


def test_flag_codes_and_summaries():
    with pytest.raises(ValueError):
        Flag("Not A Code", "x")
    with pytest.raises(ValueError, match="needs text or images"):
        ProfileSummary(text="  ")


def test_lowering_needs_an_example_solution():
    with pytest.raises(ValueError, match="the example has no solution"):
        Lowering(backend="x", programming_model="m", hardware="h", example=Example(problem="p", solution=""))


def test_records_pickle_for_the_trip_from_a_worker():
    result = VerifyResult(correct=False, failure=Failure.NAN_INF, flags=(Flag("constant_output", "same"),))
    assert pickle.loads(pickle.dumps(result)) == result


def test_options_hash_changes_with_any_field():
    from dataclasses import dataclass

    @dataclass(frozen=True)
    class Opts:
        arch: str = "sm_90"
        flags: tuple = ()

    assert options_hash(Opts()) == options_hash(Opts())
    assert options_hash(Opts()) != options_hash(Opts(flags=("-O3",)))
    assert options_hash(None) == "none"
