"""The one error type a user sees.

Plugins and the core raise :class:`KForgeError` for failures a user can act on (a bad problem file, an unknown
backend, a missing credential). The CLI turns it into a clean message and an exit code in one place; anything else
is a bug and shows its traceback.
"""

from __future__ import annotations


class KForgeError(Exception):
    """A failure the user can act on.

    :param message: what went wrong, in one sentence that names the thing (file, key, backend, plugin).
    :param hint: optionally, what to do about it.
    """

    exit_code = 1

    def __init__(self, message: str, *, hint: str | None = None) -> None:
        super().__init__(message)
        self.message = message
        self.hint = hint

    def __str__(self) -> str:
        return self.message if not self.hint else f"{self.message}\n  hint: {self.hint}"
