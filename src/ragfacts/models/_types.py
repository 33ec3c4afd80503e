"""Value types that cross the model layer: messages, replies, completions, failures."""

from __future__ import annotations

import base64
import math
from dataclasses import dataclass, field
from enum import Enum
from typing import Any, Literal

from pydantic import BaseModel, ConfigDict, Field, field_validator

from ragfacts import redaction
from ragfacts.usage import Usage


class Message(BaseModel):
    """One chat message."""

    model_config = ConfigDict(frozen=True)

    role: Literal["system", "user", "assistant"]
    content: str


class StructuredMode(str, Enum):
    """How a schema is enforced on the model's reply."""

    JSON_SCHEMA = "json_schema"  # response_format={"type": "json_schema", ...}
    TOOL = "tool"  # a forced function call whose parameters are the schema
    JSON_TEXT = "json_text"  # the schema is shown in the prompt; JSON is extracted from the text
    GRAMMAR = "grammar"  # llama.cpp grammar-constrained decoding


class FailureKind(str, Enum):
    """Why a completion ended without a usable reply."""

    INVALID_OUTPUT = "invalid_output"  # still not schema-valid after the re-asks
    TRUNCATED = "truncated"  # finish_reason == "length" on the last attempt
    TRANSIENT = "transient"  # 429 / 5xx / timeout / connection, after the retries
    REQUEST = "request"  # a 4xx the server will not change its mind about
    BACKEND = "backend"  # anything else raised by the backend


class Failure(BaseModel):
    """An explicit, recorded failure: a result, never a missing row."""

    kind: FailureKind
    message: str
    last_text: str | None = None
    status: int | None = None  # the HTTP status, when the server answered with an error

    @field_validator("message", "last_text")
    @classmethod
    def _redacted(cls, value: str | None) -> str | None:
        """A server may echo the key in its error ("Incorrect API key provided: sk-…"): never kept."""
        return None if value is None else redaction.redact(value)

    @property
    def endpoint_unusable(self) -> bool:
        """Whether this says the endpoint cannot be used at all: unreachable after retries, or refusing us."""
        return self.kind is FailureKind.TRANSIENT or (
            self.kind is FailureKind.REQUEST and self.status in (401, 403, 404)
        )


def encode_state(vector: Any) -> str:
    """A hidden state as text: base64 of its float16 values, little-endian (3 KB for 1,536 numbers).

    float16 keeps what a linear head reads (relative error ~5e-4) and makes a state cacheable as text; heads
    are trained on states stored the same way, so training and use see the same numbers.
    """
    import numpy as np

    return base64.b64encode(np.asarray(vector, dtype="<f2").tobytes()).decode("ascii")


def decode_state(text: str) -> Any:
    """The float32 numpy array of an `encode_state` text."""
    import numpy as np

    return np.frombuffer(base64.b64decode(text), dtype="<f2").astype(np.float32)


@dataclass(frozen=True)
class Request:
    """One request as a backend sends it: the conversation, the JSON schema the reply must follow (None for free
    text) and its name, the structured-output mode, and the sampling parameters."""

    messages: list[Message]
    schema: dict[str, Any] | None = None
    schema_name: str = "reply"
    mode: StructuredMode = StructuredMode.JSON_TEXT
    params: dict[str, Any] = field(default_factory=dict)

    def with_messages(self, messages: list[Message]) -> Request:
        """The same request over another conversation (a re-ask)."""
        return Request(messages, self.schema, self.schema_name, self.mode, self.params)


class RawReply(BaseModel):
    """What a backend returns for one request: text plus usage, nothing parsed."""

    text: str
    finish_reason: str | None = None
    prompt_tokens: int = 0
    completion_tokens: int = 0
    logprobs: list[dict[str, Any]] | None = None
    seconds: float = 0.0  # time the model spent on this request, queueing excluded
    state: str | None = None  # label scoring with hidden_state: the final hidden state (encode_state)

    def counted_in(self, usage: Usage) -> None:
        """Add this request's call, tokens and model time to `usage`."""
        usage.calls += 1
        usage.prompt_tokens += self.prompt_tokens
        usage.completion_tokens += self.completion_tokens
        usage.model_s += self.seconds


class LabelScores(BaseModel):
    """Probabilities of candidate labels as the first token of the reply, renormalised over the labels.

    Reading the verdict's probability instead of its argmax lets a small model be thresholded: the
    embedded 1.5B model ranks flawed statements lower than faithful ones far more reliably than it
    says "No" to them.
    """

    logprobs: dict[str, float | None]  # raw log-probability of each label's first token; None if unseen
    probabilities: dict[str, float]
    # Asked for with hidden_state=True: the model's final (normalised) hidden state at the position where the
    # reply starts, the vector its output layer turns into these log-probabilities (encode_state's text).
    state: str | None = None

    @classmethod
    def from_logprobs(cls, logprobs: dict[str, float | None], state: str | None = None) -> LabelScores:
        seen = {k: v for k, v in logprobs.items() if v is not None}
        if not seen:
            raise ValueError("none of the labels appeared among the reply's first-token candidates")
        top = max(seen.values())
        weights = {k: math.exp(v - top) if v is not None else 0.0 for k, v in logprobs.items()}
        total = sum(weights.values())
        return cls(logprobs=logprobs, probabilities={k: w / total for k, w in weights.items()}, state=state)

    def state_vector(self) -> Any:
        """The hidden state as a float32 numpy array (raises ValueError if it was not asked for)."""
        if self.state is None:
            raise ValueError("these label scores carry no hidden state (score_labels(..., hidden_state=True))")
        return decode_state(self.state)

    @property
    def best(self) -> str:
        return max(self.probabilities, key=self.probabilities.__getitem__)


SMALL_MODEL_B = 4.0  # at or below this size (billions of parameters) a model is "small"


class ModelProfile(BaseModel):
    """What a model can do, as far as ragfacts knows: strategies are chosen by this, not by backend names."""

    parameters_b: float | None = None  # billions of parameters: read from a GGUF, or declared (-M size_b=7)
    label_scores: bool | None = None  # first-token log-probabilities; None until probed
    hidden_state: bool = False  # label scoring can also return the final hidden state (trained heads read it)
    sha256: str | None = None  # of the weights, where known without hashing them (the embedded model)
    in_process: bool = False  # run by ragfacts itself (a local GGUF), one request at a time: generation is slow

    @property
    def small(self) -> bool | None:
        return None if self.parameters_b is None else self.parameters_b <= SMALL_MODEL_B


class Completion(BaseModel):
    """The outcome of one `ChatModel.complete` call, successful or not."""

    model_config = ConfigDict(arbitrary_types_allowed=True)

    text: str | None = None
    parsed: Any = None
    usage: Usage = Field(default_factory=Usage)  # complete once the model layer returns the completion
    latency_s: float = 0.0  # wall-clock time, including queueing behind other requests
    attempts: int = 0  # parse attempts: 1 + re-asks
    retries: int = 0  # transport retries (429/5xx/timeout)
    cached: bool = False
    finish_reason: str | None = None
    logprobs: list[dict[str, Any]] | None = None
    failure: Failure | None = None
    backend: str = ""
    model: str = ""
    params: dict[str, Any] = Field(default_factory=dict)
    prompt_version: str | None = None
    stage: str = "default"

    @property
    def ok(self) -> bool:
        return self.failure is None

    def record(self) -> dict[str, Any]:
        """Return a JSON-ready provenance record (no parsed object, no secrets)."""
        return self.model_dump(mode="json", exclude={"parsed", "logprobs"})


@dataclass(frozen=True)
class ModelSpec:
    """A parsed model spec: the backend, its model (an id, a GGUF path; None for the backend's default) and the
    endpoint's base URL where the backend sends requests to one."""

    backend: str
    name: str | None
    base_url: str | None = None

    def __str__(self) -> str:
        return f"{self.backend}:{self.name}" if self.name else self.backend
