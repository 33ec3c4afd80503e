"""The model layer: one async interface, structured outputs, cache, ledger, backends."""

from ragfacts.models._errors import BackendError, ConfigurationError
from ragfacts.models._types import (
    Completion,
    Failure,
    FailureKind,
    LabelScores,
    Message,
    ModelProfile,
    RawReply,
    Request,
    StructuredMode,
)
from ragfacts.models.base import ChatModel
from ragfacts.models.cache import ResponseCache
from ragfacts.models.ledger import UsageLedger
from ragfacts.models.options import LocalModelOptions, ModelOptions
from ragfacts.models.reask import ReaskWording
from ragfacts.models.slots import request_priority
from ragfacts.models.spec import ModelSpec, api_key_from_env, build_model, parse_spec, ragfacts_home
from ragfacts.usage import Usage

__all__ = [
    "BackendError",
    "ChatModel",
    "Completion",
    "ConfigurationError",
    "Failure",
    "FailureKind",
    "LabelScores",
    "LocalModelOptions",
    "Message",
    "ModelOptions",
    "ModelProfile",
    "ModelSpec",
    "RawReply",
    "ReaskWording",
    "Request",
    "ResponseCache",
    "StructuredMode",
    "Usage",
    "UsageLedger",
    "api_key_from_env",
    "build_model",
    "parse_spec",
    "ragfacts_home",
    "request_priority",
]
