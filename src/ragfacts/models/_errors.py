"""Errors a backend raises, sorted so the model layer knows what to retry."""

from __future__ import annotations

from typing import Any


class BackendError(Exception):
    """A request failed; `transient` errors are retried with backoff."""

    def __init__(
        self,
        message: str,
        *,
        transient: bool,
        retry_after: float | None = None,
        status: int | None = None,
        reply: Any = None,
    ) -> None:
        super().__init__(message)
        self.transient = transient
        self.retry_after = retry_after
        self.status = status
        self.reply = reply  # the RawReply when the server answered (its tokens are still counted)
        self.retries_used = 0  # set by the model layer when it gives up


class ConfigurationError(Exception):
    """The model cannot be set up as asked (missing key, missing extra, bad spec)."""
