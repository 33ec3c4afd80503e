"""The service's routes and error handlers over the state every request shares (`Service`)."""

from __future__ import annotations

import asyncio
import json
from collections.abc import Awaitable, Callable
from dataclasses import dataclass
from typing import Any, TypeVar

from fastapi import FastAPI, Request
from fastapi.exceptions import RequestValidationError
from fastapi.params import Depends
from fastapi.responses import Response
from starlette.exceptions import HTTPException
from starlette.types import Message

import ragfacts
from ragfacts.items import Item
from ragfacts.methods.base import Kind, Method
from ragfacts.models import ChatModel, ConfigurationError
from ragfacts.runtime import Runtime
from ragfacts.service.judging import RequestError, evaluate_rows, gate, item_gate, judge_item, method_for
from ragfacts.service.limits import Busy, RequestSlots, TimedOut, within
from ragfacts.service.logs import Redactor
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


@dataclass
class Service:
    """What every request shares: the settings, the runtime and its one model, the default methods, the metrics, the
    places to judge in, and the redaction of every response."""

    settings: ServiceSettings
    runtime: Runtime
    model: ChatModel
    defaults: dict[Kind, Method]
    metrics: ServiceMetrics
    slots: RequestSlots
    redact: Redactor

    def respond(self, status: int, content: Any, headers: dict[str, str] | None = None) -> Response:
        text = json.dumps(content, ensure_ascii=False, allow_nan=False, separators=(",", ":"))
        return Response(self.redact(text).encode("utf-8"), status, headers, media_type="application/json")

    def error(self, status: int, code: str, message: str, headers: dict[str, str] | None = None) -> Response:
        return self.respond(status, {"error": code, "message": message}, headers)

    async def judged(self, request: Request, work: Callable[[], Awaitable[T]]) -> T:
        """`work()`'s result, holding one of the places; 429 when none is free, 504 past the timeout."""
        async with self.slots.hold():
            return await within(self.settings.request_timeout_s, _unless_disconnected(request, work()))

    async def judge_one(
        self,
        request: Request,
        endpoint: str,
        judge: Method,
        item: Item,
        thresholds: dict[str, float | None],
        given: str | None,
    ) -> Response:
        result = await self.judged(request, lambda: judge_item(self.model, judge, item))
        outcome = result.outcome()
        request.state.usage = outcome.usage
        self.metrics.observe_result(judge.name, outcome)
        verdict = item_gate(judge, outcome, thresholds)
        self.metrics.observe_gate(endpoint, verdict.passed)
        return self.respond(
            200,
            {
                "id": given,
                "method": judge.spec,
                "result": result.model_dump(mode="json"),
                "outcome": outcome.model_dump(mode="json"),
                "gate": verdict.model_dump(),
            },
        )


def add_judging_routes(app: FastAPI, service: Service, guard: list[Depends]) -> None:
    """POST /check, /recall and /evaluate."""

    @app.post("/check", response_model=JudgementResponse, responses=_ERRORS, dependencies=guard, tags=["judge"])
    async def check(body: CheckRequest, request: Request) -> Response:
        """Precision of one answer against its reference: label, faithfulness, segments, error types."""
        judge = method_for("precision", body.method, service.settings.precision, body.options)
        item = Item(question=body.question, reference=body.reference, answer=body.answer)
        return await service.judge_one(request, "/check", judge, item, thresholds(body, "precision"), body.id)

    @app.post("/recall", response_model=JudgementResponse, responses=_ERRORS, dependencies=guard, tags=["judge"])
    async def recall(body: RecallRequest, request: Request) -> Response:
        """Recall of one answer: which facts (given, or generated from the ground truth) it contains."""
        judge = method_for("recall", body.method, service.settings.recall, body.options)
        item = Item(question=body.question, ground_truth=body.ground_truth, answer=body.answer, facts=body.facts)
        return await service.judge_one(request, "/recall", judge, item, thresholds(body, "recall"), body.id)

    @app.post("/evaluate", response_model=EvaluateResponse, responses=_ERRORS, dependencies=guard, tags=["judge"])
    async def evaluate(body: EvaluateRequest, request: Request) -> Response:
        """Precision and recall of every row, with summaries (bootstrap 95% intervals) and the gate."""
        methods = _evaluate_methods(body, service.defaults)
        evaluation = await service.judged(
            request,
            lambda: evaluate_rows(
                service.model,
                methods,
                body.rows,
                body.mapping,
                model_spec=str(service.runtime.spec),
                in_flight=2 * service.settings.runtime.concurrency,
            ),
        )
        request.state.usage = evaluation.usage
        for name, outcome in evaluation.outcomes:
            service.metrics.observe_result(name, outcome)
        verdict = gate(evaluation.summaries, thresholds(body, "precision", "recall"))
        service.metrics.observe_gate("/evaluate", verdict.passed)
        return service.respond(200, {**evaluation.document, "gate": verdict.model_dump()})


def add_service_routes(app: FastAPI, service: Service, guard: list[Depends]) -> None:
    """GET /health and /metrics."""

    @app.get("/health", tags=["service"])
    async def health() -> Response:
        """Whether the service is up, its model and default methods, and how busy it is."""
        return service.respond(
            200,
            {
                "status": "ok",
                "version": ragfacts.__version__,
                "model": str(service.runtime.spec),
                "precision": service.settings.precision,
                "recall": service.settings.recall,
                "judging": service.slots.active,
                "max_concurrent": service.slots.limit,
            },
        )

    @app.get("/metrics", dependencies=guard, tags=["service"], response_class=Response)
    async def prometheus() -> Response:
        """Requests by endpoint and status, latency, results, gates, and the model's calls, tokens and failures."""
        content, media_type = service.metrics.exposition()
        return Response(content, media_type=media_type)


def add_error_handlers(app: FastAPI, service: Service) -> None:
    """Every error as JSON with a code word and a message that names the fix."""

    @app.exception_handler(RequestValidationError)
    async def invalid(request: Request, exc: RequestValidationError) -> Response:
        problems = [
            {"loc": list(e["loc"]), "msg": e["msg"].removeprefix("Value error, "), "type": e["type"]}
            for e in exc.errors()
        ]
        message = "; ".join(f"{_where(p['loc'])}: {p['msg']}" for p in problems)
        return service.respond(422, {"error": "invalid_request", "message": message, "detail": problems})

    @app.exception_handler(RequestError)
    async def unusable(request: Request, exc: RequestError) -> Response:
        return service.error(422, "invalid_request", str(exc))

    @app.exception_handler(ConfigurationError)
    async def unsupported(request: Request, exc: ConfigurationError) -> Response:
        return service.error(422, "unsupported", f"the server's model cannot do what this request asks: {exc}")

    @app.exception_handler(Busy)
    async def busy(request: Request, exc: Busy) -> Response:
        return service.error(429, "busy", str(exc), {"Retry-After": str(exc.retry_after)})

    @app.exception_handler(TimedOut)
    async def timed_out(request: Request, exc: TimedOut) -> Response:
        return service.error(504, "timeout", str(exc))

    @app.exception_handler(ClientGone)
    async def gone(request: Request, exc: ClientGone) -> Response:
        return service.error(
            CLIENT_GONE, "client_gone", "the client closed the connection; the judgement was cancelled"
        )

    @app.exception_handler(HTTPException)
    async def http_error(request: Request, exc: HTTPException) -> Response:
        code = {401: "unauthorized", 404: "not_found", 405: "method_not_allowed"}.get(exc.status_code, "http_error")
        return service.error(exc.status_code, code, str(exc.detail), dict(exc.headers or {}))

    @app.exception_handler(Exception)
    async def internal(request: Request, exc: Exception) -> Response:
        return service.error(500, "internal", "an internal error (a bug in ragfacts); the server's log has the details")


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
        asked = getattr(body, kind) if kind in body.model_fields_set else None
        if kind in body.model_fields_set and (asked is None or asked.strip().lower() == "none"):
            gates = [name for name, value in thresholds(body, kind).items() if value is not None]
            if gates:
                raise RequestError(f"{', '.join(gates)} needs a {kind} method, and {kind} is none")
            continue
        methods.append(method_for(kind, asked, defaults[kind].spec))
    if not methods:
        raise RequestError("precision and recall are both none: nothing to evaluate")
    return methods


def _where(loc: list[Any]) -> str:
    parts = [str(part) for part in loc if part != "body"]
    return ".".join(parts) or "body"
