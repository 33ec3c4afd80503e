"""The gating service's app: `create_app(settings)` gives a FastAPI app whose requests share one model.

    POST /check     precision of one answer          (the result of `ragfacts --json check -r ... -a ...`)
    POST /recall    recall of one answer             (the result of `ragfacts --json recall -a ... -f ...`)
    POST /evaluate  precision and recall of rows     (the document of `ragfacts --json evaluate DATA`)
    GET  /health    liveness, the model, the defaults
    GET  /metrics   Prometheus text format

A request may give thresholds (min_consistent, min_faithfulness, min_recall); the response's `gate` says
whether they passed, with HTTP 200 either way. Errors are JSON with a code word and a message that names
the fix: 401 no token, 413 body too large, 422 invalid request, 429 busy (Retry-After), 504 timeout.
"""

from __future__ import annotations

import asyncio
import json
import logging
import re
import time
import uuid
from collections.abc import AsyncIterator, Awaitable, Callable
from contextlib import asynccontextmanager
from typing import Any, TypeVar

from fastapi import Depends, FastAPI, Request
from fastapi.exceptions import RequestValidationError
from fastapi.responses import Response
from starlette.datastructures import MutableHeaders
from starlette.exceptions import HTTPException
from starlette.types import ASGIApp, Message, Receive, Scope, Send

import ragfacts
from ragfacts.items import Item
from ragfacts.methods.base import Kind, Method
from ragfacts.models import ConfigurationError
from ragfacts.runtime import Runtime
from ragfacts.service.auth import BearerToken
from ragfacts.service.judging import RequestError, evaluate_rows, gate, item_gate, judge_item, method_for
from ragfacts.service.limits import BodyLimit, Busy, RequestSlots, TimedOut, within
from ragfacts.service.logs import REQUEST_LOGGER, Redactor, service_secrets
from ragfacts.service.metrics import ServiceMetrics
from ragfacts.service.schemas import (
    CheckRequest,
    ErrorBody,
    EvaluateRequest,
    EvaluateResponse,
    JudgementResponse,
    RecallRequest,
    thresholds,
)
from ragfacts.service.settings import ServiceSettings

T = TypeVar("T")
CLIENT_GONE = 499  # the client closed the connection before its answer (nginx's code); logged and counted only
_REQUEST_ID = re.compile(r"^[A-Za-z0-9._:-]{1,64}$")
_ERRORS: dict[int | str, dict[str, Any]] = {
    status: {"model": ErrorBody, "description": text}
    for status, text in (
        (401, "no valid bearer token (when the server has one)"),
        (413, "the body is larger than --max-body-kb"),
        (422, "an invalid request: a missing or unknown field, an unknown method or option"),
        (429, "the server is judging --max-concurrent requests; retry after Retry-After seconds"),
        (504, "the judgement took longer than --request-timeout"),
    )
}


class ClientGone(Exception):
    """The client disconnected while its request was judged; the judgement was cancelled."""


def create_app(settings: ServiceSettings) -> FastAPI:
    """The service over one shared model built from `settings.runtime`; raises ConfigurationError for a bad setup."""
    runtime = Runtime(settings.runtime)
    model = runtime.model()
    try:
        defaults: dict[Kind, Method] = {
            "precision": method_for("precision", settings.precision),
            "recall": method_for("recall", settings.recall),
        }
    except RequestError as exc:
        raise ConfigurationError(f"the default method: {exc}") from exc
    redact = Redactor(service_secrets(settings))
    metrics = ServiceMetrics(runtime.ledger)
    slots = RequestSlots(settings.max_concurrent, settings.request_timeout_s)
    auth = BearerToken(settings.token, settings.token_env)
    log = logging.getLogger(REQUEST_LOGGER)

    def respond(status: int, content: Any, headers: dict[str, str] | None = None) -> Response:
        text = json.dumps(content, ensure_ascii=False, allow_nan=False, separators=(",", ":"))
        return Response(redact(text).encode("utf-8"), status, headers, media_type="application/json")

    def error(status: int, code: str, message: str, headers: dict[str, str] | None = None) -> Response:
        return respond(status, {"error": code, "message": message}, headers)

    @asynccontextmanager
    async def lifespan(app: FastAPI) -> AsyncIterator[None]:
        log.info("ready", extra={"fields": _startup_fields(settings, runtime, auth)})
        try:
            yield
        finally:
            await runtime.aclose()

    app = FastAPI(
        title="ragfacts",
        version=ragfacts.__version__,
        summary="Faithfulness (L-Face4RAG) and factual recall (FaaF) of RAG answers, as a gating service.",
        description=__doc__.split("\n\n", 1)[1] if __doc__ else "",  # no docstring under python -OO
        lifespan=lifespan,
    )
    guard = [Depends(auth.dependency())] if auth.enabled else []

    async def judged(request: Request, work: Callable[[], Awaitable[T]]) -> T:
        """`work()`'s result, holding one of the places; 429 when none is free, 504 past the timeout."""
        async with slots.hold():
            return await within(settings.request_timeout_s, _unless_disconnected(request, work()))

    async def judge_one(
        request: Request,
        endpoint: str,
        judge: Method,
        item: Item,
        thresholds: dict[str, float | None],
        given: str | None,
    ) -> Response:
        result = await judged(request, lambda: judge_item(model, judge, item))
        outcome = result.outcome()
        request.state.usage = outcome.usage
        metrics.observe_result(judge.name, outcome)
        verdict = item_gate(judge, outcome, thresholds)
        metrics.observe_gate(endpoint, verdict.passed)
        return respond(
            200,
            {
                "id": given,
                "method": judge.spec,
                "result": result.model_dump(mode="json"),
                "outcome": outcome.model_dump(mode="json"),
                "gate": verdict.model_dump(),
            },
        )

    @app.post("/check", response_model=JudgementResponse, responses=_ERRORS, dependencies=guard, tags=["judge"])
    async def check(body: CheckRequest, request: Request) -> Response:
        """Precision of one answer against its reference: label, faithfulness, segments, error types."""
        judge = method_for("precision", body.method or settings.precision, body.options)
        item = Item(question=body.question, reference=body.reference, answer=body.answer)
        return await judge_one(request, "/check", judge, item, thresholds(body, "precision"), body.id)

    @app.post("/recall", response_model=JudgementResponse, responses=_ERRORS, dependencies=guard, tags=["judge"])
    async def recall(body: RecallRequest, request: Request) -> Response:
        """Recall of one answer: which facts (given, or generated from the ground truth) it contains."""
        judge = method_for("recall", body.method or settings.recall, body.options)
        item = Item(question=body.question, ground_truth=body.ground_truth, answer=body.answer, facts=body.facts)
        return await judge_one(request, "/recall", judge, item, thresholds(body, "recall"), body.id)

    @app.post("/evaluate", response_model=EvaluateResponse, responses=_ERRORS, dependencies=guard, tags=["judge"])
    async def evaluate(body: EvaluateRequest, request: Request) -> Response:
        """Precision and recall of every row, with summaries (bootstrap 95% intervals) and the gate."""
        methods = _evaluate_methods(body, defaults)
        evaluation = await judged(
            request,
            lambda: evaluate_rows(
                model,
                methods,
                body.rows,
                body.mapping,
                model_spec=str(runtime.spec),
                in_flight=2 * settings.runtime.concurrency,
            ),
        )
        request.state.usage = evaluation.usage
        for name, outcome in evaluation.outcomes:
            metrics.observe_result(name, outcome)
        verdict = gate(evaluation.summaries, thresholds(body, "precision", "recall"))
        metrics.observe_gate("/evaluate", verdict.passed)
        return respond(200, {**evaluation.document, "gate": verdict.model_dump()})

    @app.get("/health", tags=["service"])
    async def health() -> Response:
        """Whether the service is up, its model and default methods, and how busy it is."""
        return respond(
            200,
            {
                "status": "ok",
                "version": ragfacts.__version__,
                "model": str(runtime.spec),
                "precision": settings.precision,
                "recall": settings.recall,
                "judging": slots.active,
                "max_concurrent": slots.limit,
            },
        )

    @app.get("/metrics", dependencies=guard, tags=["service"], response_class=Response)
    async def prometheus() -> Response:
        """Requests by endpoint and status, latency, results, gates, and the model's calls, tokens and failures."""
        content, media_type = metrics.exposition()
        return Response(content, media_type=media_type)

    @app.exception_handler(RequestValidationError)
    async def invalid(request: Request, exc: RequestValidationError) -> Response:
        problems = [
            {"loc": list(e["loc"]), "msg": e["msg"].removeprefix("Value error, "), "type": e["type"]}
            for e in exc.errors()
        ]
        message = "; ".join(f"{_where(p['loc'])}: {p['msg']}" for p in problems)
        return respond(422, {"error": "invalid_request", "message": message, "detail": problems})

    @app.exception_handler(RequestError)
    async def unusable(request: Request, exc: RequestError) -> Response:
        return error(422, "invalid_request", str(exc))

    @app.exception_handler(ConfigurationError)
    async def unsupported(request: Request, exc: ConfigurationError) -> Response:
        return error(422, "unsupported", f"the server's model cannot do what this request asks: {exc}")

    @app.exception_handler(Busy)
    async def busy(request: Request, exc: Busy) -> Response:
        return error(429, "busy", str(exc), {"Retry-After": str(exc.retry_after)})

    @app.exception_handler(TimedOut)
    async def timed_out(request: Request, exc: TimedOut) -> Response:
        return error(504, "timeout", str(exc))

    @app.exception_handler(ClientGone)
    async def gone(request: Request, exc: ClientGone) -> Response:
        return error(CLIENT_GONE, "client_gone", "the client closed the connection; the judgement was cancelled")

    @app.exception_handler(HTTPException)
    async def http_error(request: Request, exc: HTTPException) -> Response:
        code = {401: "unauthorized", 404: "not_found", 405: "method_not_allowed"}.get(exc.status_code, "http_error")
        return error(exc.status_code, code, str(exc.detail), dict(exc.headers or {}))

    @app.exception_handler(Exception)
    async def internal(request: Request, exc: Exception) -> Response:
        return error(500, "internal", "an internal error (a bug in ragfacts); the server's log has the details")

    paths = {route.path for route in app.routes if hasattr(route, "path")}
    app.add_middleware(BodyLimit, max_bytes=settings.max_body_bytes, respond=error)
    app.add_middleware(Observe, metrics=metrics, log=log, paths=paths)  # outermost: sees every answer, 413 too
    return app


class Observe:
    """ASGI middleware: a request id, then per request one log line and the request metrics."""

    def __init__(self, app: ASGIApp, metrics: ServiceMetrics, log: logging.Logger, paths: set[str]) -> None:
        self.app = app
        self.metrics = metrics
        self.log = log
        self.paths = paths

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        if scope["type"] != "http":
            await self.app(scope, receive, send)
            return
        started = time.perf_counter()
        given = dict(scope["headers"]).get(b"x-request-id", b"").decode("latin-1")
        request_id = given if _REQUEST_ID.match(given) else uuid.uuid4().hex
        state = scope.setdefault("state", {})
        status = 500  # unless the app answers: an exception becomes a 500 outside this middleware

        async def send_with_id(message: Message) -> None:
            nonlocal status
            if message["type"] == "http.response.start":
                status = message["status"]
                MutableHeaders(scope=message).append("X-Request-ID", request_id)
            await send(message)

        self.metrics.in_progress.inc()
        try:
            await self.app(scope, receive, send_with_id)
        finally:
            self.metrics.in_progress.dec()
            seconds = time.perf_counter() - started
            route = scope.get("route")
            path = scope["path"]
            endpoint = getattr(route, "path", None) or (path if path in self.paths else "unmatched")
            self.metrics.observe_request(endpoint, status, seconds)
            usage = state.get("usage")
            fields = {
                "request_id": request_id,
                "method": scope["method"],
                "path": path if path in self.paths else "(unmatched)",
                "status": status,
                "latency_ms": round(seconds * 1000, 1),
                "calls": usage.calls if usage is not None else 0,
                "tokens": usage.tokens if usage is not None else 0,
            }
            self.log.info("request", extra={"fields": fields})


async def _unless_disconnected(request: Request, work: Awaitable[T]) -> T:
    """`work`'s result; if the client disconnects first, the work is cancelled and ClientGone raised."""
    task = asyncio.ensure_future(work)
    watcher = asyncio.ensure_future(_disconnect(request.receive))
    try:
        done, _ = await asyncio.wait({task, watcher}, return_when=asyncio.FIRST_COMPLETED)
    finally:
        for pending in (task, watcher):
            if not pending.done():
                pending.cancel()
    if task in done:
        return task.result()
    await asyncio.gather(task, return_exceptions=True)
    raise ClientGone


async def _disconnect(receive: Callable[[], Awaitable[Message]]) -> None:
    """Return once the client has disconnected (the body was read already: nothing else arrives)."""
    while (await receive())["type"] != "http.disconnect":
        pass


def _evaluate_methods(body: EvaluateRequest, defaults: dict[Kind, Method]) -> list[Method]:
    methods: list[Method] = []
    kinds: tuple[Kind, ...] = ("precision", "recall")
    for kind in kinds:
        spec = getattr(body, kind) if kind in body.model_fields_set else defaults[kind].spec
        if spec is None or spec.strip().lower() == "none":
            gates = [name for name, value in thresholds(body, kind).items() if value is not None]
            if gates:
                raise RequestError(f"{', '.join(gates)} needs a {kind} method, and {kind} is none")
            continue
        methods.append(method_for(kind, spec))
    if not methods:
        raise RequestError("precision and recall are both none: nothing to evaluate")
    return methods


def _where(loc: list[Any]) -> str:
    parts = [str(part) for part in loc if part != "body"]
    return ".".join(parts) or "body"


def _startup_fields(settings: ServiceSettings, runtime: Runtime, auth: BearerToken) -> dict[str, Any]:
    return {
        "model": str(runtime.spec),
        "precision": settings.precision,
        "recall": settings.recall,
        "max_concurrent": settings.max_concurrent,
        "model_concurrency": settings.runtime.concurrency,
        "request_timeout_s": settings.request_timeout_s,
        "max_body_kb": settings.max_body_kb,
        "auth": f"bearer token from {auth.source}" if auth.enabled else "none",
    }
