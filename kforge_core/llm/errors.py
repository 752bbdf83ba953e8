"""How a provider call can end other than with a reply."""

from __future__ import annotations

from ..errors import KForgeError


class ProviderError(KForgeError):
    """A call failed for good: a non-transient error (bad key, unknown model) or transient ones past the retries.

    The run stops and stays resumable; nothing about the failed call is kept except this message.
    """


class NoMoreReplies(KForgeError):
    """The provider has nothing more to say (a replay script ran out). The run ends there, as on a spent budget."""
