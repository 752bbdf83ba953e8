"""What a worker serves: each request is in one of two tables, a candidate's worker's or the referee's; the
referee judges only once told the problem and never where a candidate is served; a message that is no request
fails as the harness's own fault."""

from __future__ import annotations

from kforge_core.harness.protocol import (
    Begin, BuildOnHost, Conclude, Expect, Finish, JudgeBegin, MeasureBaselines, Prepare, RunStage, Shipped,
    ShippedBatch, Time, Wait,
)
from kforge_core.harness.worker.worker import CANDIDATE_REQUESTS, REFEREE_REQUESTS, Worker
from kforge_core.records import Candidate, Failure


def _bare_worker() -> Worker:
    worker = Worker.__new__(Worker)  # its requests, without a process, plugins or a device
    worker.preloading = worker.context = worker.device = worker.candidate = worker.judge = None
    return worker


def test_a_candidates_worker_and_the_referee_serve_requests_of_their_own():
    assert set(CANDIDATE_REQUESTS) == {Prepare, Begin, RunStage, Time, Finish, MeasureBaselines, BuildOnHost}
    assert set(REFEREE_REQUESTS) == {Expect, JudgeBegin, Shipped, ShippedBatch, Conclude}


def test_a_message_that_is_no_request_fails_as_the_harnesss_fault():
    reply = _bare_worker().handle(Wait("call", "timed run 0", True))
    assert reply.failure is Failure.HARNESS
    assert reply.message.startswith("the harness failed: ") and "unknown request Wait(" in reply.message
    assert "a KForge bug" in reply.message and "--debug" in reply.message  # the user is told where to look
    assert "Traceback" in reply.detail and "unknown request" in reply.detail  # what --debug shows


def test_the_referee_judges_only_once_told_the_problem_and_never_where_a_candidate_is_served():
    worker = _bare_worker()
    for request in (JudgeBegin(), ShippedBatch(()), Conclude("verify")):
        reply = worker.handle(request)
        assert reply.failure is Failure.HARNESS and "before it was told the problem" in reply.message
    worker.candidate = Candidate.from_source("x = 1\n")
    for request in (Expect(problem=None), JudgeBegin(), Conclude("verify")):
        assert "a worker that serves a candidate cannot judge" in worker.handle(request).message
