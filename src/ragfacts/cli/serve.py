"""`ragfacts serve`: check, recall and evaluate as an HTTP gating service over one shared model."""

from __future__ import annotations

import importlib.util
import os
from typing import Annotated

import typer

from ragfacts.cli._app import app
from ragfacts.cli._common import AppState, fail
from ragfacts.models import ConfigurationError

DEFAULT_TOKEN_ENV = "RAGFACTS_SERVE_TOKEN"  # also ragfacts.service.DEFAULT_TOKEN_ENV; not imported: no fastapi here
_NEEDS = ("fastapi", "uvicorn", "prometheus_client")  # the serve extra


@app.command()
def serve(
    ctx: typer.Context,
    host: Annotated[str, typer.Option(help="the address to listen on; 0.0.0.0 reaches beyond this machine")] = (
        "127.0.0.1"
    ),
    port: Annotated[int, typer.Option(min=0, max=65535, help="the port; 0 picks a free one (logged)")] = 8000,
    max_body_kb: Annotated[int, typer.Option(min=1, help="larger request bodies are refused with 413")] = 1024,
    request_timeout: Annotated[
        float,
        typer.Option(
            min=0.001,
            max=86400,
            help="seconds a request may be judged before it is answered 504 (--timeout is per model call)",
        ),
    ] = 300.0,
    max_concurrent: Annotated[
        int, typer.Option(min=1, help="requests judged at once; one more is answered 429 with Retry-After")
    ] = 32,
    token_env: Annotated[
        str | None,
        typer.Option(
            help=f"the environment variable holding the bearer token clients must send (default: {DEFAULT_TOKEN_ENV}, "
            "if set); a variable named here must be set"
        ),
    ] = None,
    precision: Annotated[str, typer.Option(help="the precision method of requests that name none")] = "lface4rag",
    recall: Annotated[str, typer.Option(help="the recall method of requests that name none")] = "faaf",
) -> None:
    """Serve POST /check, /recall, /evaluate, GET /health, /metrics and /docs over HTTP (JSON logs on stderr).

    Every request shares the model of the global options (--model, --base-url, -M, --concurrency) and
    chooses its method per request ({"method": "lface4rag:strategy=paper"}); thresholds in a request
    (min_faithfulness, ...) are answered with a gate: passed or failed, HTTP 200 either way.
    """
    state: AppState = ctx.obj
    missing = [name for name in _NEEDS if importlib.util.find_spec(name) is None]
    if missing:
        fail(f"ragfacts serve needs {', '.join(missing)}: pip install 'ragfacts[serve]'")
    from ragfacts.service import ServiceSettings
    from ragfacts.service import serve as run_service

    variable = token_env or DEFAULT_TOKEN_ENV
    token = os.environ.get(variable) or None
    if token_env is not None and token is None:
        fail(f"--token-env {token_env}: that environment variable is not set; set it to the token clients must send")
    settings = ServiceSettings(
        runtime=state.settings,
        max_body_kb=max_body_kb,
        request_timeout_s=request_timeout,
        max_concurrent=max_concurrent,
        token=token,
        token_env=variable if token is not None else None,
        precision=precision,
        recall=recall,
    )
    try:
        run_service(settings, host, port)
    except ConfigurationError as error:
        fail(str(error))
