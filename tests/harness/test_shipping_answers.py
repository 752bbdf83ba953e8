"""The worker's link to the referee reads answers in the order the calls were shipped, whoever waits first: a trial
judged while the next one ran gets its own answer, never the next trial's."""

from __future__ import annotations

import pytest

from kforge_core.harness.protocol import Conclusion, Judged
from kforge_core.harness.worker.shipping import ChannelReferee


class Pipe:
    """The KForge process's side, answering each message in order."""

    def __init__(self) -> None:
        self.sent: list[object] = []
        self.answers: list[tuple[int, object]] = []

    def send(self, message: tuple[int, object]) -> None:
        self.sent.append(message[1])
        kind = message[1]
        self.answers.append((message[0], Conclusion() if kind == "conclude" else Judged(True, None, str(kind))))

    def receive(self, *, trusted: bool) -> tuple[int, object]:
        return self.answers.pop(0)


def test_answers_waited_for_out_of_order_each_reach_their_own_asker(monkeypatch):
    import kforge_core.harness.worker.shipping as shipping

    monkeypatch.setattr(shipping, "Conclude", lambda kind: "conclude")
    pipe = Pipe()
    referee = ChannelReferee(pipe, lambda: 7)
    first, second = referee.judge_later("trial 1"), referee.judge_later("trial 2")
    third = referee.judge("trial 3")  # read after the two before it, which wait here for their askers
    assert third.message == "trial 3"
    assert second().message == "trial 2" and first().message == "trial 1"
    assert isinstance(referee.conclude("verify"), Conclusion)
    with pytest.raises(RuntimeError, match="waited for twice"):
        first()
