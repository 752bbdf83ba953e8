"""Which provider errors are transient, and the backoff between retries."""

from __future__ import annotations

import httpx
import openai
import pytest

from kforge_core.llm.retry import backoff_delay, is_transient
from kforge_core.settings import LLMSettings

REQUEST = httpx.Request("POST", "http://127.0.0.1:1/v1/chat/completions")


def status_error(cls, status: int, headers=None):
    return cls("scripted", response=httpx.Response(status, request=REQUEST, headers=headers or {}), body=None)


@pytest.mark.parametrize("exc, transient", [
    (status_error(openai.RateLimitError, 429), True),
    (status_error(openai.InternalServerError, 500), True),
    (status_error(openai.InternalServerError, 503), True),
    (openai.APITimeoutError(REQUEST), True),
    (openai.APIConnectionError(request=REQUEST), True),
    (httpx.ReadTimeout("slow"), True),
    (TimeoutError(), True),
    (status_error(openai.BadRequestError, 400), False),
    (status_error(openai.AuthenticationError, 401), False),
    (status_error(openai.NotFoundError, 404), False),
    (ValueError("bad"), False),
])
def test_transient_errors_are_recognised(exc, transient):
    assert is_transient(exc) is transient


def test_a_wrapped_transient_error_is_recognised():
    try:
        try:
            raise status_error(openai.RateLimitError, 429)
        except openai.RateLimitError as inner:
            raise RuntimeError("integration wrapper") from inner
    except RuntimeError as outer:
        assert is_transient(outer)


def test_backoff_doubles_honours_retry_after_and_is_capped():
    settings = LLMSettings(retry_initial_s=1.0, retry_max_s=10.0)
    plain = status_error(openai.InternalServerError, 500)
    assert [backoff_delay(n, plain, settings) for n in (1, 2, 3, 4, 5)] == [1.0, 2.0, 4.0, 8.0, 10.0]
    asked = status_error(openai.RateLimitError, 429, {"retry-after": "7"})
    assert backoff_delay(1, asked, settings) == 7.0
    assert backoff_delay(1, status_error(openai.RateLimitError, 429, {"retry-after": "70"}), settings) == 10.0
