"""Structured logs (one JSON object a line, on stderr) and the redaction of secrets from logs and responses.

A request's line holds its method, path, status, latency, calls and tokens: never a body, a header or a
secret. Whatever text does leave the service (a log line, a response body) passes the redactor first, so
an API key or a base URL's credentials that a model reply or an error message echoes never get out.
"""

from __future__ import annotations

import json
import logging
import os
import sys
from collections.abc import Iterable
from datetime import datetime, timezone
from typing import Any

from ragfacts import redaction
from ragfacts.models import api_key_from_env
from ragfacts.service.settings import ServiceSettings

REDACTED = redaction.REDACTED
REQUEST_LOGGER = "ragfacts.service"


class Redactor:
    """The process's one redaction step (`ragfacts.redaction`), with the service's own secrets registered."""

    def __init__(self, secrets: Iterable[str]) -> None:
        redaction.register(*secrets)

    def __call__(self, text: str) -> str:
        return redaction.redact(text)


def service_secrets(settings: ServiceSettings) -> list[str]:
    """The secrets the service holds: the API key, its own token, credentials and query values of the base URL."""
    secrets = [api_key_from_env() or ""]
    if settings.token is not None:
        secrets.append(settings.token.get_secret_value())
    base_url = settings.runtime.base_url or os.environ.get("RAGFACTS_BASE_URL") or ""
    redaction.register_url(base_url)
    return [secret for secret in secrets if secret]


class JsonLines(logging.Formatter):
    """One JSON object a line: time, level, logger, event, and the record's structured `fields`."""

    def __init__(self, redact: Redactor) -> None:
        super().__init__()
        self.redact = redact

    def format(self, record: logging.LogRecord) -> str:
        entry: dict[str, Any] = {
            "time": datetime.fromtimestamp(record.created, timezone.utc).isoformat(timespec="milliseconds"),
            "level": record.levelname.lower(),
            "logger": record.name,
            "event": record.getMessage(),
        }
        entry.update(getattr(record, "fields", {}))
        if record.exc_info:
            entry["error"] = self.formatException(record.exc_info)
        return self.redact(json.dumps(entry, ensure_ascii=False, default=str))


def configure_logging(redact: Redactor, level: int = logging.INFO) -> logging.Handler:
    """Send the service's and the server's logs, and Python's warnings, to stderr as JSON lines (replacing
    handlers set up before): every line on stderr is one JSON object."""
    handler = logging.StreamHandler(sys.stderr)
    handler.setFormatter(JsonLines(redact))
    logging.captureWarnings(True)
    for name in (REQUEST_LOGGER, "uvicorn", "py.warnings"):
        logger = logging.getLogger(name)
        for old in list(logger.handlers):
            logger.removeHandler(old)
        logger.addHandler(handler)
        logger.setLevel(level)
        logger.propagate = False
    return handler
