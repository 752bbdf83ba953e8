"""One call to a model: send the messages, retry transient failures with backoff, and account for what it used."""

from __future__ import annotations

import time
from dataclasses import dataclass
from typing import TYPE_CHECKING, Callable, Sequence

from ..errors import KForgeError
from ..settings import LLMSettings
from .errors import ProviderError
from ..secrets import redact
from .retry import backoff_delay, is_transient
from .spec import ModelSpec
from .usage import Usage, cost_usd, usage_of

if TYPE_CHECKING:
    from llama_index.core.base.llms.types import ChatMessage
    from llama_index.core.llms import LLM

# (requests made so far, seconds the next retry would wait) -> whether the budget allows it
RetryGate = Callable[[int, float], bool]

# providers whose llama-index integration takes a per-request temperature (``chat(messages, temperature=...)``)
PER_REQUEST_TEMPERATURE = ("openai", "openai-like", "anthropic")


@dataclass(frozen=True)
class LLMReply:
    """What one call returned and what it cost.

    :param text: the reply's text ("" when the model said nothing).
    :param model: the ``PROVIDER:MODEL`` spec that answered.
    :param usage: tokens, as the provider reported them.
    :param cost_usd: from ``[llm] prices``; None when the model has no price there.
    :param requests: requests sent, 1 plus the retries.
    :param seconds: wall time of the call, waits included.
    :param retries: one line per failed request (the error, redacted).
    """

    text: str
    model: str
    usage: Usage
    cost_usd: float | None
    requests: int
    seconds: float
    retries: tuple[str, ...] = ()


class ChatClient:
    """Calls one llama-index LLM (any integration, or the replay one) the same way."""

    def __init__(
        self, llm: LLM, spec: ModelSpec, settings: LLMSettings, *, sleep: Callable[[float], None] = time.sleep
    ) -> None:
        self.llm = llm
        self.spec = spec
        self.settings = settings
        self._sleep = sleep

    def ask(self, messages: Sequence[ChatMessage], *, may_retry: RetryGate = lambda requests, delay: True,
            temperature: float | None = None) -> LLMReply:
        """Send ``messages``; retry transient errors up to ``max_retries`` times while ``may_retry`` allows.
        ``temperature``: this request's, where the provider takes one per request (else the configured one).

        :raises ProviderError: on a non-transient error, or when retries are used up or refused by the budget.
        :raises KForgeError: as the provider raised it (``NoMoreReplies`` when a replay script ran out).
        """
        start = time.monotonic()
        failures: list[str] = []
        extra = {"temperature": temperature} if temperature is not None and self.takes_temperature else {}
        while True:
            try:
                response = self.llm.chat(list(messages), **extra)
                break
            except KForgeError:
                raise  # already says what to do (a replay script's broken expectation, an exhausted script)
            except Exception as exc:
                failures.append(redact(f"{type(exc).__name__}: {exc}")[:500])
                self._wait_or_raise(exc, failures, may_retry)
        usage = usage_of(response)
        return LLMReply(
            text=response.message.content or "",
            model=str(self.spec),
            usage=usage,
            cost_usd=cost_usd(usage, self.spec, self.settings.prices),
            requests=len(failures) + 1,
            seconds=time.monotonic() - start,
            retries=tuple(failures),
        )

    @property
    def takes_temperature(self) -> bool:
        """Whether a request may carry a temperature of its own."""
        return self.spec.provider in PER_REQUEST_TEMPERATURE

    def cost_of(self, input_tokens: int, output_tokens: int) -> float | None:
        """USD for that many tokens at this model's price; None when it has none."""
        return cost_usd(Usage(input_tokens, output_tokens), self.spec, self.settings.prices)

    def _wait_or_raise(self, exc: Exception, failures: list[str], may_retry: RetryGate) -> None:
        retry = len(failures)
        last = failures[-1]
        if not is_transient(exc):
            raise ProviderError(f"{self.spec} failed: {last}") from None
        if retry > self.settings.max_retries:
            raise ProviderError(
                f"{self.spec} failed {retry} times; the last error: {last}",
                hint="raise [llm] max_retries, or resume the run later with `kforge run --resume`",
            ) from None
        delay = backoff_delay(retry, exc, self.settings)
        if not may_retry(retry, delay):
            raise ProviderError(
                f"{self.spec} failed ({last}) and the run's budget leaves no room to retry",
                hint="resume the run with a larger budget with `kforge run --resume`",
            ) from None
        self._sleep(delay)
