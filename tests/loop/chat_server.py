"""A real HTTP server on 127.0.0.1 that speaks OpenAI's ``/v1/chat/completions`` with scripted replies.

Entries are replay-script lines (``{"reply": ..., "usage": ..., "expect": ...}``) plus control entries:
``{"status": 429}`` or ``{"status": 500}`` answers that error once; ``{"hold": true}`` keeps the next request waiting
until :meth:`ChatServer.release` and then drops it unanswered (a test kills the client while a call is in flight).
The server checks each entry's ``expect`` against what arrived (text, image parts, which agent asked) and counts
the replies it gave, so a test can tell whether a call was repeated.
"""

from __future__ import annotations

import json
import threading
from dataclasses import dataclass, field
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path
from typing import Any


@dataclass
class Received:
    """One request as it arrived."""

    path: str
    authorization: str
    body: dict[str, Any]

    @property
    def messages(self) -> list[dict[str, Any]]:
        return self.body.get("messages", [])

    @property
    def text(self) -> str:
        parts = []
        for message in self.messages:
            content = message.get("content")
            if isinstance(content, str):
                parts.append(content)
            elif isinstance(content, list):
                parts += [p.get("text", "") for p in content if p.get("type") == "text"]
        return "\n".join(parts)

    @property
    def image_urls(self) -> list[str]:
        return [p["image_url"]["url"] for m in self.messages if isinstance(m.get("content"), list)
                for p in m["content"] if p.get("type") == "image_url"]

    @property
    def agent(self) -> str:
        system = next((m.get("content") for m in self.messages if m.get("role") == "system"), "") or ""
        return "analysis" if "performance-analysis agent" in str(system) else "generation"


@dataclass
class ChatServer:
    entries: list[dict[str, Any]]
    received: list[Received] = field(default_factory=list)
    answered: list[Received] = field(default_factory=list)  # requests that got a scripted reply
    errors: list[str] = field(default_factory=list)  # broken expectations
    position: int = 0
    holding: threading.Event = field(default_factory=threading.Event)
    _release: threading.Event = field(default_factory=threading.Event)
    _lock: threading.Lock = field(default_factory=threading.Lock)

    @classmethod
    def from_script(cls, path: Path, *, insert: dict[int, list[dict[str, Any]]] | None = None) -> ChatServer:
        """Entries from a replay script; ``insert`` puts control entries before the reply of the given index."""
        lines = [json.loads(line) for line in path.read_text().splitlines() if line.strip()]
        entries: list[dict[str, Any]] = []
        for i, line in enumerate(lines):
            entries += (insert or {}).get(i, [])
            entries.append(line)
        return cls(entries)

    def start(self) -> str:
        server = self

        class Handler(BaseHTTPRequestHandler):
            def do_POST(self) -> None:  # noqa: N802
                length = int(self.headers.get("content-length", "0"))
                request = Received(self.path, self.headers.get("authorization", ""), json.loads(self.rfile.read(length)))
                answer = server._answer(request)
                if answer is None:
                    return  # a held request: its client was killed meanwhile
                status, payload, headers = answer
                body = json.dumps(payload).encode()
                try:
                    self.send_response(status)
                    for key, value in {"content-type": "application/json", **headers}.items():
                        self.send_header(key, value)
                    self.send_header("content-length", str(len(body)))
                    self.end_headers()
                    self.wfile.write(body)
                except OSError:
                    pass

            def log_message(self, *args: Any) -> None:
                pass

        self._httpd = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
        self._thread = threading.Thread(target=self._httpd.serve_forever, kwargs={"poll_interval": 0.05}, daemon=True)
        self._thread.start()
        return f"http://127.0.0.1:{self._httpd.server_address[1]}/v1"

    def stop(self) -> None:
        self._release.set()
        self._httpd.shutdown()
        self._httpd.server_close()

    def release(self) -> None:
        self._release.set()

    def _answer(self, request: Received) -> tuple[int, dict[str, Any], dict[str, str]] | None:
        with self._lock:
            self.received.append(request)
            entry = self.entries[self.position] if self.position < len(self.entries) else None
            if entry is None:
                return 400, {"error": {"message": "the chat server's script has no entry left"}}, {}
            problem = "" if "status" in entry or entry.get("hold") else _broken_expectation(entry, request)
            if problem:
                self.errors.append(problem)
                return 400, {"error": {"message": problem, "type": "expectation"}}, {}
            self.position += 1
            if "reply" in entry:
                self.answered.append(request)
        if entry.get("hold"):
            self.holding.set()
            self._release.wait(timeout=300)
            return None
        if "status" in entry:
            return entry["status"], {"error": {"message": f"scripted {entry['status']}", "type": "scripted"}}, {
                "retry-after": "0"}
        usage = entry.get("usage", {"input_tokens": 0, "output_tokens": 0})
        reply = entry["reply"] if isinstance(entry["reply"], str) else "\n".join(entry["reply"])
        return 200, {
            "id": f"chatcmpl-{self.position}", "object": "chat.completion", "created": 0,
            "model": request.body.get("model", "?"),
            "choices": [{"index": 0, "message": {"role": "assistant", "content": reply}, "finish_reason": "stop"}],
            "usage": {"prompt_tokens": usage["input_tokens"], "completion_tokens": usage["output_tokens"],
                      "total_tokens": usage["input_tokens"] + usage["output_tokens"]},
        }, {}


def _broken_expectation(entry: dict[str, Any], request: Received) -> str:
    expect = entry.get("expect", {})
    if entry.get("agent") and entry["agent"] != request.agent:
        return f"expected the {entry['agent']} agent, got the {request.agent} agent"
    contains = expect.get("contains", [])
    for text in [contains] if isinstance(contains, str) else contains:
        if text not in request.text:
            return f"the prompt lacks {text!r}"
    if "images" in expect and len(request.image_urls) != expect["images"]:
        return f"expected {expect['images']} image part(s), got {len(request.image_urls)}"
    return ""
