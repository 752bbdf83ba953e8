"""The one list of environment variables that hold credentials, and what KForge does with it.

Workers start without these variables (``harness/host/sandbox.py``), and everything KForge writes (the run store, its
artifacts, logs and messages) passes through :func:`redact`, which masks their values and the password of a URL.
Keys are read from the environment by the provider clients only; redaction is the second line of defence.
"""

from __future__ import annotations

import os
import re
from typing import Mapping

# Names of environment variables that hold credentials; matched case-insensitively against the whole name.
SECRET_NAME_PATTERNS = (
    r".*_API_KEY", r".*_APIKEY", r".*_TOKEN", r".*SECRET.*", r".*PASSWORD.*", r".*_CREDENTIALS?",
    r".*_ACCESS_KEY(_ID)?", r".*_PRIVATE_KEY",
    r"AWS_.*", r"AZURE_.*", r"GOOGLE_.*", r"GCP_.*", r"GCLOUD_.*", r"CLOUDSDK_.*",
    r"OPENAI_.*", r"ANTHROPIC_.*", r"HF_TOKEN", r"HUGGING_FACE_HUB_TOKEN", r"NETRC",
)
_SECRET_NAME = re.compile("|".join(f"(?:{p})" for p in SECRET_NAME_PATTERNS), re.IGNORECASE)


def is_secret(name: str) -> bool:
    """Whether the environment variable ``name`` holds a credential."""
    return _SECRET_NAME.fullmatch(name) is not None
_URL_PASSWORD = re.compile(r"(?P<scheme>[a-z][a-z0-9+.-]*://)(?P<user>[^:/@\s]*):(?P<password>[^@/\s]+)@", re.I)
MASK = "[redacted]"
_MIN_SECRET_LENGTH = 6  # shorter values ("1", "true") would mask ordinary text


def secret_values(environ: Mapping[str, str] | None = None) -> tuple[str, ...]:
    """The values of secret-looking variables in ``environ`` (the process environment by default)."""
    environ = os.environ if environ is None else environ
    values = {v for k, v in environ.items() if is_secret(k) and len(v) >= _MIN_SECRET_LENGTH}
    return tuple(sorted(values, key=len, reverse=True))


def redact(text: str, secrets: tuple[str, ...] | None = None) -> str:
    """``text`` with every secret value and URL password replaced by ``[redacted]``."""
    for value in secret_values() if secrets is None else secrets:
        if value in text:
            text = text.replace(value, MASK)
    return _URL_PASSWORD.sub(lambda m: f"{m['scheme']}{m['user']}:{MASK}@", text)
