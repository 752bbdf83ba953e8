"""Redaction catches a secret in the forms code that read it could print it in, in the terminal's output and in the
messages sent to a model."""

from __future__ import annotations

import base64
import io
import urllib.parse

import pytest

from kforge_core.agents.prompt import Prompt
from kforge_core.redacting_stream import RedactingStream
from kforge_core.secrets import MASK, redact

SECRET = "sk-proj-Abc123_secret/value+9"


@pytest.mark.parametrize("prefix", [b"", b"x", b"xy", b"KEY=", b"OPENAI_API_KEY="])
@pytest.mark.parametrize("encode", [base64.b64encode, base64.urlsafe_b64encode])
def test_base64_at_every_alignment_with_and_without_padding(prefix, encode):
    encoded = encode(prefix + SECRET.encode() + b"\0NEXT=1").decode()
    for text in (encoded, encoded.rstrip("="), encode(prefix + SECRET.encode()).decode().rstrip("=")):
        redacted = redact(text, (SECRET,))
        assert MASK in redacted
        assert base64.b64decode(encode(SECRET.encode())).decode() not in redacted


@pytest.mark.parametrize("form", [
    SECRET, SECRET[::-1], SECRET.encode().hex(), SECRET.encode().hex().upper(), urllib.parse.quote(SECRET, safe=""),
])
def test_plain_reversed_hex_and_url_encoded(form):
    assert redact(f"found: {form}!", (SECRET,)) == f"found: {MASK}!"


def test_the_messages_sent_to_a_model_are_redacted(monkeypatch):
    monkeypatch.setenv("OPENAI_API_KEY", SECRET)
    encoded = base64.b64encode(SECRET.encode()).decode()
    prompt = Prompt(agent="generation", system=f"system {SECRET}", user=f"the candidate printed {encoded}")
    sent = " ".join(str(message.content) for message in prompt.messages())
    assert SECRET not in sent and encoded not in sent and sent.count(MASK) == 2


def test_the_terminal_stream_redacts_whole_lines(monkeypatch):
    monkeypatch.setenv("MY_SERVICE_TOKEN", SECRET)
    out = io.StringIO()
    stream = RedactingStream(out)
    half = len(SECRET) // 2
    stream.write(f"a line with {SECRET[:half]}")
    stream.write(f"{SECRET[half:]} split across writes\nand the rest ")
    stream.write(SECRET[::-1])
    stream.flush()
    assert out.getvalue() == f"a line with {MASK} split across writes\nand the rest {MASK}"
