"""The ``corpus:`` stand-in model served over HTTP as an OpenAI-compatible server (``POST /v1/chat/completions``),
so that a run measured with it goes through the real ``openai-like`` provider: its concurrency, retries and
timeouts. A request the corpus fails on purpose (``errors``) is answered 503; a problem the corpus holds no kernel
for, 400. It counts the requests in flight, for benchmarks and tests.

    python -m kforge_core.llm.corpus_server 'solutions/?latency=20&fail=0.3' --port 8000
    kforge run PROBLEM --llm openai-like:corpus --base-url http://127.0.0.1:8000/v1 ...

It listens on 127.0.0.1 only.
"""

from __future__ import annotations

import argparse
import json
import threading
import time
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Any

from ..errors import KForgeError
from .corpus import CorpusModel, CorpusUnavailable, parse_corpus


class CorpusServer:
    """Serves ``model`` on 127.0.0.1 (``port`` 0: any free one) in a thread of its own; a context manager."""

    def __init__(self, model: CorpusModel, port: int = 0) -> None:
        self.model = model
        self._lock = threading.Lock()
        self.requests = 0  # every request that arrived
        self.failed = 0  # answered with an error status
        self.in_flight = 0
        self.most_in_flight = 0
        self._in_flight_s = 0.0  # the time integral of in_flight: its mean over a span is this over the span
        self._changed = time.monotonic()
        self._httpd = ThreadingHTTPServer(("127.0.0.1", port), self._handler())
        self._httpd.daemon_threads = True
        self._thread = threading.Thread(target=self._httpd.serve_forever, kwargs={"poll_interval": 0.05},
                                        daemon=True, name="kforge-corpus-server")

    @property
    def url(self) -> str:
        """The base URL for ``[llm] base_url``."""
        return f"http://127.0.0.1:{self._httpd.server_address[1]}/v1"

    def start(self) -> CorpusServer:
        self._thread.start()
        return self

    def stop(self) -> None:
        self._httpd.shutdown()
        self._httpd.server_close()

    def serve_forever(self) -> None:
        """Serve in this thread until interrupted (the command line's way)."""
        try:
            self._httpd.serve_forever()
        except KeyboardInterrupt:
            pass
        finally:
            self._httpd.server_close()

    def __enter__(self) -> CorpusServer:
        return self.start()

    def __exit__(self, *exc: object) -> None:
        self.stop()

    def in_flight_seconds(self) -> float:
        """Requests in flight integrated over time (request-seconds) since the server was made."""
        with self._lock:
            return self._in_flight_s + self.in_flight * (time.monotonic() - self._changed)

    def _count(self, change: int) -> None:
        now = time.monotonic()
        self._in_flight_s += self.in_flight * (now - self._changed)
        self._changed = now
        self.in_flight += change

    def answer(self, body: dict[str, Any]) -> tuple[int, dict[str, Any]]:
        """(status, payload) for one chat-completions request body."""
        with self._lock:
            self.requests += 1
            self._count(+1)
            self.most_in_flight = max(self.most_in_flight, self.in_flight)
        try:
            system, user = _texts(body.get("messages", []))
            answer = self.model.answer(system, user, max_tokens=body.get("max_tokens"))
        except CorpusUnavailable as exc:
            return self._failed(503, str(exc))
        except KForgeError as exc:
            return self._failed(400, str(exc))
        finally:
            with self._lock:
                self._count(-1)
        return 200, {
            "id": f"chatcmpl-corpus-{self.requests}", "object": "chat.completion", "created": 0,
            "model": body.get("model", "corpus"),
            "choices": [{"index": 0, "message": {"role": "assistant", "content": answer.text},
                         "finish_reason": "stop"}],
            "usage": {"prompt_tokens": answer.input_tokens, "completion_tokens": answer.output_tokens,
                      "total_tokens": answer.input_tokens + answer.output_tokens},
        }

    def _failed(self, status: int, message: str) -> tuple[int, dict[str, Any]]:
        with self._lock:
            self.failed += 1
        return status, {"error": {"message": message, "type": "corpus"}}

    def _handler(self) -> type[BaseHTTPRequestHandler]:
        server = self

        class Handler(BaseHTTPRequestHandler):
            def do_POST(self) -> None:  # noqa: N802
                length = int(self.headers.get("content-length", "0"))
                try:
                    body = json.loads(self.rfile.read(length))
                except json.JSONDecodeError:
                    status, payload = 400, {"error": {"message": "the body is not JSON"}}
                else:
                    status, payload = server.answer(body) if self.path.endswith("/chat/completions") else (
                        404, {"error": {"message": f"no {self.path} here: POST /v1/chat/completions"}})
                data = json.dumps(payload).encode()
                try:
                    self.send_response(status)
                    self.send_header("content-type", "application/json")
                    self.send_header("content-length", str(len(data)))
                    if status == 503:
                        self.send_header("retry-after", "0")
                    self.end_headers()
                    self.wfile.write(data)
                except OSError:
                    pass  # the client gave up (its timeout)

            def log_message(self, *args: Any) -> None:
                pass

        return Handler


def _texts(messages: list[dict[str, Any]]) -> tuple[str, str]:
    """The system text and the rest, from OpenAI chat messages (content as a string or a list of parts)."""
    system, user = [], []
    for message in messages:
        content = message.get("content")
        if isinstance(content, list):
            content = "\n".join(p.get("text", "") for p in content if p.get("type") == "text")
        (system if message.get("role") == "system" else user).append(content or "")
    return "\n".join(system), "\n".join(user)


def main(argv: list[str] | None = None) -> None:
    parser = argparse.ArgumentParser(description="Serve a corpus of kernels as an OpenAI-compatible model.")
    parser.add_argument("corpus", help="DIR or 'DIR?latency=20&fail=0.3' (see kforge_core.llm.corpus)")
    parser.add_argument("--port", type=int, default=8000)
    args = parser.parse_args(argv)
    directory, options = parse_corpus(args.corpus)
    server = CorpusServer(CorpusModel(directory, options), args.port)
    print(f"serving {directory} at {server.url} (Ctrl-C stops)", flush=True)
    server.serve_forever()


if __name__ == "__main__":
    main()
