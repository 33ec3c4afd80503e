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

import logging
import re
import time
import uuid
from collections.abc import AsyncIterator
from contextlib import asynccontextmanager
from typing import Any

from fastapi import Depends, FastAPI
from starlette.datastructures import MutableHeaders
from starlette.types import ASGIApp, Message, Receive, Scope, Send

import ragfacts
from ragfacts.methods.base import Kind, Method
from ragfacts.models import ConfigurationError
from ragfacts.runtime import Runtime
from ragfacts.service.auth import BearerToken
from ragfacts.service.judging import RequestError, method_for
from ragfacts.service.limits import BodyLimit, RequestSlots
from ragfacts.service.logs import REQUEST_LOGGER, Redactor, service_secrets
from ragfacts.service.metrics import ServiceMetrics
from ragfacts.service.routes import Service, add_error_handlers, add_judging_routes, add_service_routes
from ragfacts.service.settings import ServiceSettings

_REQUEST_ID = re.compile(r"^[A-Za-z0-9._:-]{1,64}$")


def create_app(settings: ServiceSettings) -> FastAPI:
    """The service over one shared model built from `settings.runtime`; raises ConfigurationError for a bad setup."""
    runtime = Runtime(settings.runtime)
    try:
        defaults: dict[Kind, Method] = {
            "precision": method_for("precision", None, settings.precision),
            "recall": method_for("recall", None, settings.recall),
        }
    except RequestError as exc:
        raise ConfigurationError(f"the default method: {exc}") from exc
    metrics = ServiceMetrics(runtime.ledger)
    slots = RequestSlots(settings.max_concurrent, settings.request_timeout_s)
    redact = Redactor(service_secrets(settings))
    service = Service(settings, runtime, runtime.model(), defaults, metrics, slots, redact)
    auth = BearerToken(settings.token, settings.token_env)
    log = logging.getLogger(REQUEST_LOGGER)

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
    add_judging_routes(app, service, guard)
    add_service_routes(app, service, guard)
    add_error_handlers(app, service)
    paths = {route.path for route in app.routes if hasattr(route, "path")}
    app.add_middleware(BodyLimit, max_bytes=settings.max_body_bytes, respond=service.error)
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
