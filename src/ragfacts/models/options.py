"""Model options: a misspelled option fails loudly."""

from __future__ import annotations

from pydantic import BaseModel, ConfigDict, Field

from ragfacts.models._types import StructuredMode


class ModelOptions(BaseModel):
    """How requests are made; everything that changes the output also enters the cache key."""

    model_config = ConfigDict(extra="forbid")

    mode: StructuredMode | None = Field(None, description="structured-output mode; None = backend default")
    schema_in_prompt: bool | None = Field(
        None, description="render the schema into the prompt; None = when the mode does not show it"
    )
    temperature: float = 0.0
    seed: int | None = 42
    max_tokens: int = 1024
    reasks: int = Field(2, ge=0, description="re-asks after an invalid reply")
    max_retries: int = Field(4, ge=0, description="transport retries after 429/5xx/timeouts")
    retry_base_s: float = 1.0
    retry_max_s: float = 60.0
    timeout_s: float = 120.0
    concurrency: int = Field(8, ge=1, description="requests in flight at once")
    size_b: float | None = Field(
        None,
        gt=0,
        description="the model's size in billions of parameters, declared for endpoints whose size ragfacts "
        "cannot read (a GGUF's is read from its header); strategy=auto chooses by it",
    )
