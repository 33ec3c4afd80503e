"""Model options: a misspelled option fails loudly."""

from __future__ import annotations

from collections.abc import Mapping
from typing import Literal

from pydantic import BaseModel, ConfigDict, Field

from ragfacts.models._errors import ConfigurationError
from ragfacts.models._types import StructuredMode

DEFAULT_ENDPOINT_CONTEXT = 131_072  # tokens: the largest common context; -M n_ctx= declares the real one


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
    max_retries: int = Field(4, ge=0, description="transport retries after 429/5xx/connection errors, within timeout_s")
    retry_base_s: float = 1.0
    retry_max_s: float = Field(60.0, description="the longest wait between retries (Retry-After included)")
    timeout_s: float = Field(
        120.0, description="seconds a call may take from its first request, its retries and their waits included"
    )
    http: Literal["direct", "aiohttp", "httpx"] | None = Field(
        None,
        description="endpoints: how calls are sent; direct = on aiohttp without the openai SDK (the default: 1.5-1.7 "
        "ms less client CPU per call, and no SDK import), aiohttp or httpx = through the SDK on that stack (httpx "
        "for SOCKS proxies or HTTP/2); a base URL with credentials in it goes on httpx",
    )
    auth: Literal["bearer", "api-key"] | None = Field(
        None,
        description="endpoints: how the key is sent; bearer = `Authorization: Bearer KEY` (OpenAI's), api-key = an "
        "`api-key: KEY` header (Azure OpenAI's); default api-key for an Azure-shaped base URL (a host under "
        ".openai.azure.com or .cognitiveservices.azure.com, or an api-version query), else bearer",
    )
    concurrency: int = Field(8, ge=1, description="requests in flight at once")
    rpm: float | None = Field(
        None, gt=0, description="requests per minute to the endpoint, shared by the models of a process that use it"
    )
    tpm: float | None = Field(
        None,
        gt=0,
        description="tokens per minute to the endpoint: a request counts its prompt (estimated from its characters) "
        "plus max_tokens until its reply reports the real usage",
    )
    size_b: float | None = Field(
        None,
        gt=0,
        description="the model's size in billions of parameters, declared for endpoints whose size ragfacts "
        "cannot read (a GGUF's is read from its header); strategy=auto chooses by it",
    )
    n_ctx: int | None = Field(
        None,
        ge=64,
        description="the model's context in tokens: a prompt estimated above it is not sent (an unscored result "
        f"says so); endpoints: default {DEFAULT_ENDPOINT_CONTEXT:,}",
    )


class LocalModelOptions(ModelOptions):
    """Options of in-process GGUF models (the local backend): the shared ones and how llama.cpp loads the model."""

    n_ctx: int | None = Field(
        None, ge=64, description="context window in tokens; default RAGFACTS_LOCAL_N_CTX, else 8192"
    )
    n_gpu_layers: int | None = Field(
        None,
        ge=-1,
        description="layers offloaded to the GPU, -1 = all; default all when llama.cpp was built with GPU support, "
        "else 0",
    )
    n_threads: int | None = Field(None, ge=1, description="CPU threads; default every core")


def model_options(values: Mapping[str, object]) -> ModelOptions:
    """Options from plain values: LocalModelOptions when they name a local-only option, else ModelOptions.

    Raises pydantic's ValidationError for an unknown option or a bad value; the model built with the options
    refuses those its backend does not take.
    """
    local_only = set(LocalModelOptions.model_fields) - set(ModelOptions.model_fields)
    options_class = LocalModelOptions if local_only & set(values) else ModelOptions
    return options_class.model_validate(dict(values))


def options_as(options_class: type[ModelOptions], options: ModelOptions | None, backend: str) -> ModelOptions:
    """`options` as a backend's options class; raises ConfigurationError for options that backend does not take."""
    if options is None:
        return options_class()
    if type(options) is options_class:
        return options
    given = options.model_dump(exclude_unset=True)
    foreign = sorted(k for k, v in given.items() if k not in options_class.model_fields and v is not None)
    if foreign:
        local_only = set(LocalModelOptions.model_fields) - set(ModelOptions.model_fields)
        where = "in-process GGUF models (--model local)" if set(foreign) <= local_only else "another backend"
        raise ConfigurationError(
            f"model option {', '.join(foreign)} is for {where}; the {backend} backend does not take it"
        )
    return options_class.model_validate({k: v for k, v in given.items() if k in options_class.model_fields})
