"""The one list of environment variables that hold credentials, and what KForge does with it.

Workers start without these variables (``harness/host/sandbox.py``), and everything KForge writes (the run store, its
artifacts, logs and messages) passes through :func:`redact`, which masks their values and the password of a URL.
Keys are read from the environment by the provider clients only; redaction is the second line of defence.
"""

from __future__ import annotations

import base64
import functools
import os
import re
import urllib.parse
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
    """``text`` with every secret value, its encoded forms (:func:`encoded_forms`) and URL passwords replaced by
    ``[redacted]``."""
    for value in secret_values() if secrets is None else secrets:
        for form in encoded_forms(value):
            if form in text:
                text = text.replace(form, MASK)
    return _URL_PASSWORD.sub(lambda m: f"{m['scheme']}{m['user']}:{MASK}@", text)


@functools.lru_cache(maxsize=256)
def encoded_forms(value: str) -> tuple[str, ...]:
    """``value`` as code that read it could have printed it: plain, reversed, hex (both cases), URL-encoded, and
    base64 (standard and URL-safe, padded or not, and at each of the three byte offsets it can have inside a longer
    encoded text: there only the characters that depend on the value alone are matched). Longest first."""
    raw = value.encode()
    forms = {value, value[::-1], raw.hex(), raw.hex().upper(), urllib.parse.quote(value, safe=""),
             urllib.parse.quote_plus(value, safe="")}
    for encode in (base64.b64encode, base64.urlsafe_b64encode):
        whole = encode(raw).decode()
        forms.update((whole, whole.rstrip("=")))
        for offset in range(3):
            encoded = encode(bytes(offset) + raw).decode()
            start, end = -(-8 * offset // 6), 8 * (offset + len(raw)) // 6  # characters of the value's bits only
            forms.add(encoded[start:end])
    return tuple(sorted((f for f in forms if len(f) >= _MIN_SECRET_LENGTH), key=len, reverse=True))
