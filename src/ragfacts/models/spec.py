"""Model specs (`openai:MODEL`, `local`, `local:/path/model.gguf`) and building models from them."""

from __future__ import annotations

import os
from dataclasses import dataclass
from pathlib import Path

from ragfacts import redaction
from ragfacts.models._errors import ConfigurationError
from ragfacts.models.base import ChatModel
from ragfacts.models.cache import ResponseCache
from ragfacts.models.ledger import UsageLedger
from ragfacts.models.options import ModelOptions

KEY_VARIABLES = ("RAGFACTS_API_KEY", "OPENAI_API_KEY")


@dataclass(frozen=True)
class ModelSpec:
    """A parsed model spec; `name` is a model id, a GGUF path or None for the embedded default."""

    backend: str
    name: str | None
    base_url: str | None = None

    def __str__(self) -> str:
        return f"{self.backend}:{self.name}" if self.name else self.backend


def parse_spec(text: str, base_url: str | None = None) -> ModelSpec:
    """Parse a model spec; raises ConfigurationError with the accepted forms."""
    backend, _, name = text.strip().partition(":")
    backend = backend.lower()
    if backend == "openai":
        if not name:
            raise ConfigurationError("`openai:` needs a model name, e.g. --model openai:gpt-4o-mini")
        url = base_url or os.environ.get("RAGFACTS_BASE_URL") or None
        redaction.register_url(url)  # credentials in a base URL are secrets: never stored, never printed
        return ModelSpec("openai", name, url)
    if backend == "local":
        return ModelSpec("local", name or None)
    raise ConfigurationError(
        f"unknown model spec {text!r}: use openai:MODEL (with --base-url for other servers), "
        "local, or local:/path/to/model.gguf"
    )


def api_key_from_env() -> str | None:
    """Return the API key from the environment only (never from files or arguments)."""
    for variable in KEY_VARIABLES:
        value = os.environ.get(variable)
        if value:
            redaction.register(value)  # whatever reads the key makes it a secret of the process
            return value
    return None


def ragfacts_home() -> Path:
    """The one directory that holds ragfacts state; RAGFACTS_HOME overrides it."""
    if os.environ.get("RAGFACTS_HOME"):
        return Path(os.environ["RAGFACTS_HOME"])
    base = os.environ.get("XDG_CACHE_HOME") or Path.home() / ".cache"
    return Path(base) / "ragfacts"


def check_credentials(spec: ModelSpec) -> None:
    """Raise ConfigurationError if the model could not be called for want of a key (checked before any work)."""
    if spec.backend == "openai" and api_key_from_env() is None and spec.base_url is None:
        raise ConfigurationError(
            "no API key: set OPENAI_API_KEY (or RAGFACTS_API_KEY), pass --base-url for a local server, or use "
            "--model local"
        )


def build_model(
    spec: ModelSpec,
    options: ModelOptions | None = None,
    *,
    cache: ResponseCache | None = None,
    ledger: UsageLedger | None = None,
) -> ChatModel:
    """Build a ready model from a spec; backends are imported lazily."""
    check_credentials(spec)
    if spec.backend == "openai":
        from ragfacts.models.openai_compat import OpenAICompatibleModel

        key = api_key_from_env()
        assert spec.name is not None
        return OpenAICompatibleModel(
            spec.name, options, base_url=spec.base_url, api_key=key, cache=cache, ledger=ledger
        )
    if spec.backend == "local":
        from ragfacts.models.llamacpp import LlamaCppModel

        return LlamaCppModel.from_spec(spec.name, options, cache=cache, ledger=ledger)
    raise ConfigurationError(f"unknown backend {spec.backend!r}")
