"""Model specs (`openai:MODEL`, `local`, `local:/path/model.gguf`, a plugin's `NAME:...`) and building models
from them, through the backend registry (`ragfacts.models.registry`)."""

from __future__ import annotations

import os

from ragfacts import redaction
from ragfacts.models._errors import ConfigurationError
from ragfacts.models._types import ModelSpec
from ragfacts.models.base import ChatModel
from ragfacts.models.cache import ResponseCache
from ragfacts.models.ledger import UsageLedger
from ragfacts.models.options import ModelOptions
from ragfacts.models.registry import backend_class, spec_forms
from ragfacts.paths import ragfacts_home

KEY_VARIABLES = ("RAGFACTS_API_KEY", "OPENAI_API_KEY")

__all__ = ["KEY_VARIABLES", "ModelSpec", "api_key_from_env", "build_model", "parse_spec", "ragfacts_home"]


def parse_spec(text: str, base_url: str | None = None) -> ModelSpec:
    """Parse a model spec `BACKEND[:NAME]`; raises ConfigurationError with the forms every backend accepts."""
    prefix, _, name = text.strip().partition(":")
    try:
        cls = backend_class(prefix.lower())
    except ConfigurationError:
        raise ConfigurationError(f"unknown model spec {text!r}: use {spec_forms()}") from None
    return cls.spec_from(name or None, base_url)


def api_key_from_env() -> str | None:
    """Return the API key from the environment only (never from files or arguments)."""
    for variable in KEY_VARIABLES:
        value = os.environ.get(variable)
        if value:
            redaction.register(value)  # whatever reads the key makes it a secret of the process
            return value
    return None


def check_credentials(spec: ModelSpec) -> None:
    """Raise ConfigurationError if the model could not be called for want of a key (checked before any work)."""
    backend_class(spec.backend).check_credentials(spec)


def build_model(
    spec: ModelSpec,
    options: ModelOptions | None = None,
    *,
    cache: ResponseCache | None = None,
    ledger: UsageLedger | None = None,
) -> ChatModel:
    """Build a ready model from a spec; a backend's module (and its SDK) is imported when a spec names it."""
    cls = backend_class(spec.backend)
    cls.check_credentials(spec)
    return cls.build(spec, options, cache=cache, ledger=ledger)
