"""The optional bearer token: compared in constant time, never logged, never echoed."""

from __future__ import annotations

import hashlib
import hmac
from collections.abc import Callable

from fastapi import Depends, HTTPException
from fastapi.security import HTTPAuthorizationCredentials, HTTPBearer
from pydantic import SecretStr


class BearerToken:
    """Checks `Authorization: Bearer <token>` against the configured token."""

    def __init__(self, token: SecretStr | None, source: str | None = None) -> None:
        self.source = source or "the server's configuration"  # where the token came from, e.g. its variable
        secret = token.get_secret_value() if token is not None else ""
        # Digests, not the texts, are compared: equal lengths, so the time taken tells nothing, not even the length.
        self._digest = hashlib.sha256(secret.encode("utf-8")).digest() if secret else None

    @property
    def enabled(self) -> bool:
        return self._digest is not None

    def accepts(self, given: str | None) -> bool:
        """Whether `given` is the token (always, when no token is configured)."""
        if self._digest is None:
            return True
        candidate = hashlib.sha256((given or "").encode("utf-8")).digest()
        return hmac.compare_digest(candidate, self._digest)

    def dependency(self) -> Callable[..., None]:
        """A FastAPI dependency that answers 401 unless the request carries the token (shown in /docs)."""
        scheme = HTTPBearer(auto_error=False, description=f"the token set in {self.source} where the server runs")

        def require_token(credentials: HTTPAuthorizationCredentials | None = Depends(scheme)) -> None:  # noqa: B008
            if not self.accepts(credentials.credentials if credentials is not None else None):
                raise HTTPException(
                    status_code=401,
                    detail="a valid bearer token is required: send the header Authorization: Bearer <token>",
                    headers={"WWW-Authenticate": "Bearer"},
                )

        return require_token
