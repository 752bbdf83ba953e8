"""Which provider errors are worth retrying, and how long to wait before the next try.

Integrations raise their SDK's own exception types; they are recognised by status code and by name, so this module
imports no SDK.
"""

from __future__ import annotations

from ..settings import LLMSettings

_TRANSIENT_STATUS = {408, 409, 429}
_TRANSIENT_NAMES = {
    "APITimeoutError", "APIConnectionError", "RateLimitError", "InternalServerError", "ServiceUnavailableError",
    "TimeoutException", "TransportError", "ReadTimeout", "ConnectTimeout", "RemoteProtocolError",
}


def status_code(exc: BaseException) -> int | None:
    """The HTTP status an exception carries (``exc.status_code`` or ``exc.response.status_code``), if any."""
    for holder in (exc, getattr(exc, "response", None)):
        code = getattr(holder, "status_code", None)
        if isinstance(code, int):
            return code
    return None


def is_transient(exc: BaseException) -> bool:
    """True for timeouts, dropped connections, rate limits (429) and server errors (5xx), also when wrapped."""
    seen: set[int] = set()
    current: BaseException | None = exc
    while current is not None and id(current) not in seen:
        seen.add(id(current))
        code = status_code(current)
        if code is not None:
            return code in _TRANSIENT_STATUS or code >= 500
        if isinstance(current, (TimeoutError, ConnectionError)):
            return True
        if any(cls.__name__ in _TRANSIENT_NAMES for cls in type(current).__mro__):
            return True
        current = current.__cause__ or current.__context__
    return False


def _retry_after(exc: BaseException) -> float | None:
    headers = getattr(getattr(exc, "response", None), "headers", None)
    try:
        return float(headers.get("retry-after")) if headers is not None else None
    except (TypeError, ValueError):
        return None


def backoff_delay(retry: int, exc: BaseException, settings: LLMSettings) -> float:
    """Seconds to wait before retry number ``retry`` (1, 2, ...): doubling from ``retry_initial_s``, at least what
    the server's Retry-After asks, at most ``retry_max_s``."""
    delay = settings.retry_initial_s * 2 ** (retry - 1)
    asked = _retry_after(exc)
    if asked is not None:
        delay = max(delay, asked)
    return min(delay, settings.retry_max_s)
