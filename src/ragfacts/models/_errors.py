"""Errors a backend raises, sorted so the model layer knows what to retry."""

from __future__ import annotations

from typing import Any

from ragfacts.retry_after import seconds_to_wait


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

    @classmethod
    def http(cls, status: int, message: str, retry_after: str | None) -> BackendError:
        """An HTTP error reply (status >= 400), whichever client got it: transient for 408, 409, 429 and 5xx, with
        the wait its Retry-After header asks for (seconds or an HTTP date)."""
        return cls(
            f"HTTP {status}: {message}",
            transient=status in (408, 409, 429) or status >= 500,
            retry_after=seconds_to_wait(retry_after),
            status=status,
        )


class ConfigurationError(Exception):
    """The model cannot be set up as asked (missing key, missing extra, bad spec)."""
