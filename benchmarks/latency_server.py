"""An OpenAI-compatible chat-completions server that answers every request after a fixed latency.

For the performance benchmarks: it plays a hosted model whose every call takes `--latency-ms`, and is itself
cheap (an ASGI app on uvicorn, replies generated once per schema), so the time a client takes beyond the
latency is the client's. It answers what ragfacts and its peers ask: a valid instance of the request's JSON schema
(in response_format, a forced tool call, or written into the prompt as RAGAS writes it), with `--items` entries in
lists that allow it (answers decompose into that many segments) and list entries numbered 1..n where a schema
numbers them; first-token log-probabilities for label-scoring requests; plain text otherwise. Usage is counted
from the request's characters (4 per token). `GET /v1/stats` says what it has served.

    python benchmarks/latency_server.py --port 8765 --latency-ms 200 [--items 2]

`serve(port, latency_s, items)` runs it in this process; `start(...)` starts it as a subprocess and waits.
"""

from __future__ import annotations

import argparse
import asyncio
import contextlib
import json
import socket
import subprocess
import sys
import time
from pathlib import Path
from typing import Any

_REPLIES: dict[str, str] = {}


def instance(schema: dict[str, Any], items: int, index: int = 0, defs: dict[str, Any] | None = None) -> Any:
    """A value valid under `schema`: first enum values, "x" strings, lists of `items` entries (within bounds).

    `$ref`s to the schema's own `$defs` (pydantic's layout for nested models) are followed."""
    defs = schema.get("$defs", defs) or {}
    if "$ref" in schema:
        return instance(defs[schema["$ref"].rsplit("/", 1)[-1]], items, index, defs)
    if "enum" in schema:
        return schema["enum"][0]
    if "const" in schema:
        return schema["const"]
    if "anyOf" in schema:
        return instance(schema["anyOf"][0], items, index, defs)
    if "allOf" in schema:
        return instance(schema["allOf"][0], items, index, defs)
    kind = schema.get("type")
    if isinstance(kind, list):
        kind = kind[0]
    if kind == "object":
        return {
            key: (index + 1 if key == "segment" else instance(value, items, index, defs))
            for key, value in schema.get("properties", {}).items()
        }
    if kind == "array":
        count = min(max(schema.get("minItems", 0), items), schema.get("maxItems", items))
        return [instance(schema.get("items", {}), items, n, defs) for n in range(max(count, 1))]
    if kind == "integer":
        return max(schema.get("minimum", 0), 0)
    if kind == "number":
        return 0.5
    if kind == "boolean":
        return True
    if kind == "null":
        return None
    return f"x{index}"


# A schema written into the prompt, as RAGAS's prompts end ("... as specified in JSON Schema:\n{...}").
PROMPT_SCHEMA = "as specified in JSON Schema:"


def _schema(body: dict[str, Any]) -> dict[str, Any] | None:
    fmt = body.get("response_format") or {}
    if fmt.get("type") == "json_schema":
        return fmt["json_schema"]["schema"]
    if body.get("tools"):
        return body["tools"][0]["function"]["parameters"]
    text = str((body.get("messages") or [{}])[-1].get("content", ""))
    at = text.rfind(PROMPT_SCHEMA)
    if at >= 0:
        with contextlib.suppress(ValueError):
            found, _ = json.JSONDecoder().raw_decode(text[at + len(PROMPT_SCHEMA) :].lstrip())
            if isinstance(found, dict):
                return found
    return None


def completion(body: dict[str, Any], items: int) -> dict[str, Any]:
    """The chat.completion answering `body`."""
    schema = _schema(body)
    choice: dict[str, Any] = {"index": 0, "finish_reason": "stop"}
    if body.get("logprobs") and body.get("max_tokens") == 1:
        labels = ["Yes", "No", "是", "否"]
        top = [{"token": label, "logprob": -0.1 - n, "bytes": None} for n, label in enumerate(labels)]
        choice["logprobs"] = {"content": [{"token": "Yes", "logprob": -0.1, "bytes": None, "top_logprobs": top}]}
        choice["finish_reason"] = "length"
        content = "Yes"
    elif schema is not None:
        key = json.dumps(schema, sort_keys=True)
        if key not in _REPLIES:
            _REPLIES[key] = json.dumps(instance(schema, items), ensure_ascii=False)
        content = _REPLIES[key]
    else:
        content = "ok"
    message: dict[str, Any] = {"role": "assistant", "content": content}
    if body.get("tools") and body.get("tool_choice"):
        name = body["tools"][0]["function"]["name"]
        call = {"id": "call_0", "type": "function", "function": {"name": name, "arguments": content}}
        message = {"role": "assistant", "content": None, "tool_calls": [call]}
    choice["message"] = message
    prompt_chars = sum(len(str(m.get("content", ""))) for m in body.get("messages", []))
    prompt_tokens, completion_tokens = prompt_chars // 4 + 1, len(content) // 4 + 1
    return {
        "id": "chatcmpl-latency",
        "object": "chat.completion",
        "created": int(time.time()),
        "model": body.get("model", "latency"),
        "choices": [choice],
        "usage": {
            "prompt_tokens": prompt_tokens,
            "completion_tokens": completion_tokens,
            "total_tokens": prompt_tokens + completion_tokens,
        },
    }


def app(latency_s: float, items: int, record: Path | None = None) -> Any:
    """The ASGI application; with `record`, every request's body is appended to that file (one JSON line each).

    `GET …/stats` answers what it has served: calls, prompt and completion tokens, and the most requests it held at
    once (so a client's real concurrency is seen, whatever its setting says)."""
    log = record.open("ab", buffering=0) if record is not None else None
    stats = {"calls": 0, "prompt_tokens": 0, "completion_tokens": 0, "in_flight": 0, "peak_in_flight": 0}

    async def reply(send: Any, data: bytes) -> None:
        headers = [(b"content-type", b"application/json"), (b"content-length", str(len(data)).encode())]
        await send({"type": "http.response.start", "status": 200, "headers": headers})
        await send({"type": "http.response.body", "body": data})

    async def asgi(scope: dict[str, Any], receive: Any, send: Any) -> None:
        if scope["type"] != "http":
            return
        if scope["method"] == "GET" and scope["path"].endswith("/stats"):
            await reply(send, json.dumps(stats).encode())
            return
        chunks = []
        while True:
            message = await receive()
            chunks.append(message.get("body", b""))
            if not message.get("more_body"):
                break
        raw = b"".join(chunks) or b"{}"
        if log is not None:
            log.write(raw.replace(b"\n", b" ") + b"\n")
        body = json.loads(raw)
        stats["in_flight"] += 1
        stats["peak_in_flight"] = max(stats["peak_in_flight"], stats["in_flight"])
        if latency_s:
            await asyncio.sleep(latency_s)
        stats["in_flight"] -= 1
        answer = completion(body, items)
        stats["calls"] += 1
        stats["prompt_tokens"] += answer["usage"]["prompt_tokens"]
        stats["completion_tokens"] += answer["usage"]["completion_tokens"]
        await reply(send, json.dumps(answer).encode())

    return asgi


def serve(port: int, latency_s: float, items: int, record: Path | None = None) -> None:
    import uvicorn

    uvicorn.run(
        app(latency_s, items, record),
        host="127.0.0.1",
        port=port,
        log_level="warning",
        access_log=False,
        backlog=4096,
        timeout_keep_alive=60,
        lifespan="off",
    )


def free_port() -> int:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return sock.getsockname()[1]


def start(latency_s: float, items: int = 2, record: Path | None = None) -> tuple[subprocess.Popen[bytes], str]:
    """Start the server in a subprocess; returns it and its base URL (…/v1) once it accepts connections."""
    port = free_port()
    command = [sys.executable, str(Path(__file__)), "--port", str(port), "--latency-ms", str(latency_s * 1000)]
    command += ["--items", str(items), *(["--record", str(record)] if record is not None else [])]
    process = subprocess.Popen(command)
    deadline = time.monotonic() + 30
    while time.monotonic() < deadline:
        try:
            socket.create_connection(("127.0.0.1", port), timeout=0.2).close()
            return process, f"http://127.0.0.1:{port}/v1"
        except OSError:
            time.sleep(0.05)
    process.kill()
    raise RuntimeError("the latency server did not start")


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--port", type=int, default=8765)
    parser.add_argument("--latency-ms", type=float, default=200.0)
    parser.add_argument("--items", type=int, default=2, help="entries in lists that allow several")
    parser.add_argument("--record", type=Path, help="append every request's body to this file, one JSON line each")
    args = parser.parse_args()
    serve(args.port, args.latency_ms / 1000, args.items, args.record)


if __name__ == "__main__":
    main()
