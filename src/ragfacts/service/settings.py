"""What `ragfacts serve` is configured with: the shared model's settings, the limits, the token, the defaults."""

from __future__ import annotations

from pydantic import BaseModel, ConfigDict, Field, SecretStr

from ragfacts.runtime import Settings

DEFAULT_TOKEN_ENV = "RAGFACTS_SERVE_TOKEN"


class ServiceSettings(BaseModel):
    """The service's configuration, declared once; the CLI's flags and `create_app` both read it."""

    model_config = ConfigDict(extra="forbid", arbitrary_types_allowed=True)

    runtime: Settings = Field(
        default_factory=Settings, description="the one model every request shares (--model, --base-url, -M ...)"
    )
    max_body_kb: int = Field(1024, ge=1, description="larger request bodies are refused with 413")
    request_timeout_s: float = Field(
        300.0, gt=0, le=86400, description="a judgement still running after this answers 504 (at most a day)"
    )
    max_concurrent: int = Field(32, ge=1, description="requests judged at once; one more is answered 429")
    token: SecretStr | None = Field(None, description="the bearer token requests must carry; None: no auth")
    token_env: str | None = Field(None, description="the variable the token was read from (named in logs)")
    precision: str = Field("lface4rag", description="the precision method of requests that name none")
    recall: str = Field("faaf", description="the recall method of requests that name none")

    @property
    def max_body_bytes(self) -> int:
        return self.max_body_kb * 1024
