"""A real OpenAI-compatible HTTP server on 127.0.0.1 with scripted replies, for tests.

The real `openai` client talks to it over HTTP, so tests exercise exactly what users reach.
Replies are consumed from a FIFO queue, else from prompt-matching rules, else generated from the
request's JSON schema (a valid instance), else a plain text reply.
"""

from __future__ import annotations

import json
import threading
import time
from collections.abc import Callable
from dataclasses import dataclass, field
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Any
from urllib.parse import parse_qs, urlsplit

from ragfacts.text import approx_tokens


@dataclass
class Reply:
    """One scripted response."""

    content: str | None = None
    obj: Any = None  # serialised to JSON at send time, in the channel the request asked for
    from_schema: bool = False
    overrides: dict[str, Any] | None = None  # with from_schema: values merged into the generated object
    finish_reason: str = "stop"
    status: int = 200
    headers: dict[str, str] = field(default_factory=dict)
    delay_s: float = 0.0
    prompt_tokens: int = 11
    completion_tokens: int = 7
    logprobs: list[dict[str, Any]] | None = None
    no_choices: bool = False  # a 200 whose body has an empty `choices` list (its usage is still reported)
    # An error's message; "{key}" becomes the key the request carried, as a bearer token or in an `api-key` header
    # (servers that echo the key).
    error_message: str | None = None

    @classmethod
    def text(cls, content: str, **kw: Any) -> Reply:
        return cls(content=content, **kw)

    @classmethod
    def json(cls, obj: Any, **kw: Any) -> Reply:
        return cls(obj=obj, **kw)

    @classmethod
    def schema_valid(cls, overrides: dict[str, Any] | None = None, **kw: Any) -> Reply:
        return cls(from_schema=True, overrides=overrides, **kw)

    @classmethod
    def malformed(cls, content: str = '{"verdict": "yes", ', **kw: Any) -> Reply:
        return cls(content=content, **kw)

    @classmethod
    def truncated(cls, content: str = '{"reasoning": "the answer says', **kw: Any) -> Reply:
        return cls(content=content, finish_reason="length", **kw)

    @classmethod
    def error(cls, status: int, retry_after: float | None = None, **kw: Any) -> Reply:
        headers = {"Retry-After": str(retry_after)} if retry_after is not None else {}
        return cls(status=status, headers=headers, **kw)

    @classmethod
    def first_token_logprobs(cls, top: dict[str, float], **kw: Any) -> Reply:
        """A one-token reply whose first-token candidates are `top` (token -> log-probability)."""
        best = max(top, key=top.__getitem__)
        candidates = [{"token": t, "logprob": lp, "bytes": None} for t, lp in top.items()]
        logprobs = [{"token": best, "logprob": top[best], "bytes": None, "top_logprobs": candidates}]
        return cls(content=best, finish_reason="length", logprobs=logprobs, completion_tokens=1, **kw)

    def delayed(self, seconds: float) -> Reply:
        self.delay_s = seconds
        return self


@dataclass
class RecordedRequest:
    path: str
    headers: dict[str, str]
    body: dict[str, Any]
    received_at: float = field(default_factory=time.monotonic)  # when the server read it (time.monotonic)

    @property
    def route(self) -> str:
        """The path the request was sent to, without its query (`path` is the request line's target, query included;
        an absolute URL when the server plays a proxy)."""
        return urlsplit(self.path).path

    @property
    def query(self) -> dict[str, list[str]]:
        """The request's query parameters, each with its values."""
        return parse_qs(urlsplit(self.path).query, keep_blank_values=True)

    @property
    def prompt(self) -> str:
        return "\n".join(str(m.get("content", "")) for m in self.body.get("messages", []))

    @property
    def schema(self) -> dict[str, Any] | None:
        return request_schema(self.body)


def request_schema(body: dict[str, Any]) -> dict[str, Any] | None:
    """The JSON schema a request asks for (response_format or forced tool), if any."""
    fmt = body.get("response_format") or {}
    if fmt.get("type") == "json_schema":
        return fmt["json_schema"]["schema"]
    if body.get("tools"):
        return body["tools"][0]["function"]["parameters"]
    return None


def instance_of(schema: dict[str, Any], root: dict[str, Any] | None = None) -> Any:
    """Return a value valid under a JSON schema: first enum value, 'x' strings, one-item lists."""
    root = root or schema
    if "$ref" in schema:
        return instance_of(root["$defs"][schema["$ref"].split("/")[-1]], root)
    if "enum" in schema:
        return schema["enum"][0]
    if "const" in schema:
        return schema["const"]
    if "anyOf" in schema:
        return instance_of(schema["anyOf"][0], root)
    kind = schema.get("type")
    if kind == "object":
        return {k: instance_of(v, root) for k, v in schema.get("properties", {}).items()}
    if kind == "array":
        count = max(schema.get("minItems", 1), 1)
        return [instance_of(schema.get("items", {}), root) for _ in range(count)]
    if kind == "integer":
        return max(schema.get("minimum", 0), 0)
    if kind == "number":
        return 0.5
    if kind == "boolean":
        return True
    if kind == "null":
        return None
    return "x"


class ScriptedServer:
    """An OpenAI-compatible chat-completions server with a script, recording every request."""

    def __init__(self, port: int = 0) -> None:
        self.requests: list[RecordedRequest] = []
        self.count_tokens = False  # usage from the request's text (approx_tokens) instead of fixed numbers
        self.in_flight = 0
        self.max_in_flight = 0  # the most requests the server was answering at once
        self._queue: list[Reply] = []
        self._rules: list[tuple[Callable[[RecordedRequest], bool], Reply, list[int]]] = []
        self._lock = threading.Lock()
        self._httpd = ThreadingHTTPServer(("127.0.0.1", port), self._handler())
        self._thread = threading.Thread(target=self._httpd.serve_forever, daemon=True)

    @property
    def base_url(self) -> str:
        host, port = self._httpd.server_address[:2]
        return f"http://{host}:{port}/v1"

    def start(self) -> ScriptedServer:
        self._thread.start()
        return self

    def stop(self) -> None:
        self._httpd.shutdown()
        self._httpd.server_close()

    def enqueue(self, *replies: Reply) -> None:
        with self._lock:
            self._queue.extend(replies)

    def when(self, contains: str, reply: Reply, times: int | None = None) -> None:
        """Answer requests whose prompt contains `contains` with `reply` (at most `times` times)."""
        self._rules.append((lambda r: contains in r.prompt, reply, [times if times is not None else -1]))

    def reset(self) -> None:
        with self._lock:
            self.requests.clear()
            self.max_in_flight = 0
            self.count_tokens = False
            self._queue.clear()
            self._rules.clear()

    def _next_reply(self, request: RecordedRequest) -> Reply:
        with self._lock:
            self.requests.append(request)
            if self._queue:
                return self._queue.pop(0)
            for matches, reply, left in self._rules:
                if left[0] != 0 and matches(request):
                    left[0] -= 1
                    return reply
        if request.schema is not None:
            return Reply.schema_valid()
        return Reply.text("ok")

    def _handler(self) -> type[BaseHTTPRequestHandler]:
        server = self

        class Handler(BaseHTTPRequestHandler):
            def log_message(self, *args: Any) -> None:
                pass

            def do_POST(self) -> None:
                length = int(self.headers.get("Content-Length", 0))
                body = json.loads(self.rfile.read(length) or b"{}")
                request = RecordedRequest(self.path, {k.lower(): v for k, v in self.headers.items()}, body)
                with server._lock:
                    server.in_flight += 1
                    server.max_in_flight = max(server.max_in_flight, server.in_flight)
                try:
                    self._answer(request)
                finally:
                    with server._lock:
                        server.in_flight -= 1

            def _answer(self, request: RecordedRequest) -> None:
                reply = server._next_reply(request)
                if reply.delay_s:
                    time.sleep(reply.delay_s)
                if reply.status != 200:
                    message = reply.error_message or f"scripted {reply.status}"
                    bearer = request.headers.get("authorization", "").removeprefix("Bearer ")
                    key = bearer or request.headers.get("api-key", "")
                    self._send(
                        reply.status,
                        {"error": {"message": message.replace("{key}", key), "type": "scripted"}},
                        reply.headers,
                    )
                    return
                self._send(200, completion_body(request.body, reply, server.count_tokens), reply.headers)

            def _send(self, status: int, payload: dict[str, Any], headers: dict[str, str]) -> None:
                data = json.dumps(payload).encode("utf-8")
                self.send_response(status)
                self.send_header("Content-Type", "application/json")
                self.send_header("Content-Length", str(len(data)))
                for key, value in headers.items():
                    self.send_header(key, value)
                self.end_headers()
                self.wfile.write(data)

        return Handler


def completion_body(body: dict[str, Any], reply: Reply, count_tokens: bool = False) -> dict[str, Any]:
    """Build a chat.completion object answering `body` with `reply`."""
    schema = request_schema(body)
    content = reply.content
    if content is None:
        obj = reply.obj
        if reply.from_schema:
            obj = instance_of(schema or {"type": "object"})
            if reply.overrides:
                obj.update(reply.overrides)
        content = json.dumps(obj, ensure_ascii=False)
    message: dict[str, Any] = {"role": "assistant", "content": content}
    if body.get("tools") and body.get("tool_choice"):
        name = body["tools"][0]["function"]["name"]
        message = {
            "role": "assistant",
            "content": None,
            "tool_calls": [{"id": "call_0", "type": "function", "function": {"name": name, "arguments": content}}],
        }
    choice: dict[str, Any] = {"index": 0, "message": message, "finish_reason": reply.finish_reason}
    if reply.logprobs is not None:
        choice["logprobs"] = {"content": reply.logprobs}
    prompt_tokens, completion_tokens = reply.prompt_tokens, reply.completion_tokens
    if count_tokens:
        texts = [str(m.get("content", "")) for m in body.get("messages", [])]
        prompt_tokens = sum(approx_tokens(t) for t in texts) + (approx_tokens(json.dumps(schema)) if schema else 0)
        completion_tokens = approx_tokens(content)
    return {
        "id": "chatcmpl-scripted",
        "object": "chat.completion",
        "created": int(time.time()),
        "model": body.get("model", "scripted"),
        "choices": [] if reply.no_choices else [choice],
        "usage": {
            "prompt_tokens": prompt_tokens,
            "completion_tokens": completion_tokens,
            "total_tokens": prompt_tokens + completion_tokens,
        },
    }
