"""Keeping credentials out of everything KForge writes: the run store, its artifacts, logs and messages.

Keys are read from the environment by the provider clients only. As a second line of defence, every text the
store or the console receives passes through :func:`redact`, which masks the value of each secret-looking
environment variable (``*_API_KEY``, ``*_TOKEN``, ``*SECRET*``, ``*PASSWORD*``) and the password of a URL.
"""

from __future__ import annotations

import os
import re
from typing import Mapping

_SECRET_NAME = re.compile(r"(API_KEY|_TOKEN|SECRET|PASSWORD|CREDENTIAL)", re.IGNORECASE)
_URL_PASSWORD = re.compile(r"(?P<scheme>[a-z][a-z0-9+.-]*://)(?P<user>[^:/@\s]*):(?P<password>[^@/\s]+)@", re.I)
MASK = "[redacted]"
_MIN_SECRET_LENGTH = 6  # shorter values ("1", "true") would mask ordinary text


def secret_values(environ: Mapping[str, str] | None = None) -> tuple[str, ...]:
    """The values of secret-looking variables in ``environ`` (the process environment by default)."""
    environ = os.environ if environ is None else environ
    values = {v for k, v in environ.items() if _SECRET_NAME.search(k) and len(v) >= _MIN_SECRET_LENGTH}
    return tuple(sorted(values, key=len, reverse=True))


def redact(text: str, secrets: tuple[str, ...] | None = None) -> str:
    """``text`` with every secret value and URL password replaced by ``[redacted]``."""
    for value in secret_values() if secrets is None else secrets:
        if value in text:
            text = text.replace(value, MASK)
    return _URL_PASSWORD.sub(lambda m: f"{m['scheme']}{m['user']}:{MASK}@", text)
