"""A stand-in RAG service for tests: a real HTTP server on 127.0.0.1 that answers JSON questions.

By default it answers `{"answer": "Answer to Q", "sources": [{"text": "Q context one"}, {"text": "Q context
two"}]}`, reading the question from the body's `query` (or `question`) key. Per question, scripted replies
(an error status, a delay, another body) are used first, in order. Every request is recorded with its
headers and body.
"""

from __future__ import annotations

import json
import threading
import time
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass, field
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Any


@dataclass
class RagReply:
    """One scripted reply: a status, a JSON body (or raw text), headers and a delay before answering."""

    status: int = 200
    body: Any = None  # None: the default answer; a str is sent as it is
    headers: dict[str, str] = field(default_factory=dict)
    delay_s: float = 0.0


@dataclass
class RagRequest:
    path: str
    headers: dict[str, str]
    body: Any

    @property
    def question(self) -> str:
        return question_of(self.body)


def question_of(body: Any) -> str:
    if isinstance(body, dict):
        return str(body.get("query", body.get("question", "")))
    return ""


def default_reply(question: str) -> dict[str, Any]:
    return {
        "answer": f"Answer to {question}",
        "sources": [{"text": f"{question} context one"}, {"text": f"{question} context two"}],
        "debug": {"took_ms": 3},
    }


class RagServer:
    """A RAG service on 127.0.0.1 with scripted replies per question, recording every request."""

    def __init__(self) -> None:
        self.requests: list[RagRequest] = []
        self._script: dict[str, list[RagReply]] = {}
        self._lock = threading.Lock()
        self._httpd = ThreadingHTTPServer(("127.0.0.1", 0), self._handler())
        self._httpd.handle_error = lambda *args: None  # a client that timed out closes the socket: not news
        self._thread = threading.Thread(target=self._httpd.serve_forever, daemon=True)

    @property
    def url(self) -> str:
        host, port = self._httpd.server_address[:2]
        return f"http://{host}:{port}/ask"

    def script(self, question: str, *replies: RagReply) -> None:
        """Answer `question` with these replies first, one per request, then with the default."""
        with self._lock:
            self._script.setdefault(question, []).extend(replies)

    def asked(self, question: str | None = None) -> int:
        """How many requests came (for `question`, if given)."""
        with self._lock:
            return sum(1 for r in self.requests if question is None or r.question == question)

    def reset(self) -> None:
        with self._lock:
            self.requests.clear()
            self._script.clear()

    def start(self) -> RagServer:
        self._thread.start()
        return self

    def stop(self) -> None:
        self._httpd.shutdown()
        self._httpd.server_close()

    def _reply(self, request: RagRequest) -> RagReply:
        with self._lock:
            self.requests.append(request)
            queue = self._script.get(request.question)
            return queue.pop(0) if queue else RagReply()

    def _handler(self) -> type[BaseHTTPRequestHandler]:
        server = self

        class Handler(BaseHTTPRequestHandler):
            def log_message(self, *args: Any) -> None:
                pass

            def do_POST(self) -> None:
                length = int(self.headers.get("Content-Length", 0))
                raw = self.rfile.read(length)
                try:
                    body = json.loads(raw or b"null")
                except json.JSONDecodeError:
                    body = raw.decode("utf-8", "replace")
                request = RagRequest(self.path, {k.lower(): v for k, v in self.headers.items()}, body)
                reply = server._reply(request)
                if reply.delay_s:
                    time.sleep(reply.delay_s)
                content = reply.body if reply.body is not None else default_reply(request.question)
                data = (content if isinstance(content, str) else json.dumps(content)).encode("utf-8")
                self.send_response(reply.status)
                self.send_header("Content-Type", "text/plain" if isinstance(content, str) else "application/json")
                self.send_header("Content-Length", str(len(data)))
                for name, value in reply.headers.items():
                    self.send_header(name, value)
                self.end_headers()
                self.wfile.write(data)

        return Handler


@contextmanager
def running_rag_server() -> Iterator[RagServer]:
    server = RagServer().start()
    try:
        yield server
    finally:
        server.stop()
