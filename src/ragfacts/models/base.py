"""The chat-model interface every method uses; backends only send one request."""

from __future__ import annotations

import time
from abc import ABC, abstractmethod
from collections.abc import Awaitable, Callable
from typing import Any, ClassVar

from ragfacts.models._errors import ConfigurationError
from ragfacts.models._types import (
    Completion,
    Failure,
    FailureKind,
    LabelScores,
    Message,
    ModelProfile,
    ModelSpec,
    RawReply,
    Request,
    StructuredMode,
)
from ragfacts.models.cache import ResponseCache
from ragfacts.models.calls import CallCache, EndpointHealth, counted, failure_of, oversized
from ragfacts.models.ledger import UsageLedger
from ragfacts.models.options import ModelOptions, options_as
from ragfacts.models.reask import PROBLEMS_ONLY, ReaskWording, reasked, with_schema_text
from ragfacts.models.structured import (
    ReplySchema,
    json_schema_of,
    parse_reply,
    render_schema,
    reply_token_cap,
    schema_name,
)
from ragfacts.models.transport import Transport
from ragfacts.usage import Usage


class ChatModel(Transport, ABC):
    """A chat model with structured outputs, validation and re-ask, retries, cache and ledger.

    Subclasses implement `_send` (one request in, text and usage out) and say which structured
    modes they support; everything else is shared, in layers every call passes through: the cache and the
    calls in flight (`calls.CallCache`), the context limit (`calls.oversized`), validation and re-ask
    (`reask.reasked`), rate limits and retries (`transport.Transport`), and the ledger (`calls.counted`).
    """

    backend: str = "abstract"
    default_mode: StructuredMode = StructuredMode.JSON_SCHEMA
    # A model that serves one request at a time gains nothing from many items in flight, and its prompt-prefix
    # cache loses: the runner then judges one item after another.
    serves_one_at_a_time: bool = False
    modes_that_show_schema: frozenset[StructuredMode] = frozenset()
    Options: ClassVar[type[ModelOptions]] = ModelOptions  # the options this backend takes
    base_url: str | None = None  # the server requests go to, for backends that send them to one

    def __init__(
        self,
        model_id: str,
        options: ModelOptions | None = None,
        *,
        cache: ResponseCache | None = None,
        ledger: UsageLedger | None = None,
    ) -> None:
        self.model_id = model_id
        self.options = options_as(self.Options, options, self.backend)
        self.ledger = ledger if ledger is not None else UsageLedger()
        self.health = EndpointHealth()
        self.label_scores: bool | None = None  # known once probed (or by the backend's nature)
        self._calls = CallCache(cache, self.backend, model_id)

    # How this backend's model specs are written, for messages (the registry lists every backend's).
    spec_forms: ClassVar[str] = ""

    @classmethod
    def spec_from(cls, name: str | None, base_url: str | None) -> ModelSpec:
        """The spec of `BACKEND:NAME` (name None when the spec is the bare backend); raises ConfigurationError."""
        if not name:
            raise ConfigurationError(f"`{cls.backend}:` needs a model name: {cls.spec_forms}")
        return ModelSpec(cls.backend, name, base_url)

    @classmethod
    def check_credentials(cls, spec: ModelSpec) -> None:
        """Raise ConfigurationError if a model of `spec` could not be called (checked before any work)."""

    @classmethod
    def notice(cls, spec: ModelSpec) -> str | None:
        """One line a command prints before judging with the model of `spec` (what it is, what it measured)."""
        return None

    @classmethod
    def build(cls, spec: ModelSpec, options: ModelOptions | None, **shared: Any) -> ChatModel:
        """The model `spec` names, ready to judge; `shared` are the run's cache and ledger (the constructor's
        `cache=` and `ledger=`). A registered backend implements it."""
        raise ConfigurationError(f"the {cls.backend} backend builds no model from a spec")

    @abstractmethod
    async def _send(self, request: Request) -> RawReply:
        """Send one request; raise BackendError on failure."""

    async def _label_logprobs(
        self, messages: list[Message], labels: list[str], params: dict[str, Any], hidden_state: bool = False
    ) -> tuple[dict[str, float | None], RawReply]:
        """Return the first-token log-probability of each label; backends that can, override this.

        With `hidden_state`, the reply's `state` carries the final hidden state at the reply's first position
        (`encode_state`); a backend that cannot read it raises ConfigurationError.
        """
        raise ConfigurationError(f"the {self.backend} backend cannot score labels by log-probability")

    @property
    def gives_hidden_state(self) -> bool:
        """Whether `score_labels(..., hidden_state=True)` can return the model's hidden state."""
        return False

    def identity(self) -> dict[str, Any]:
        """What the model is, as its response cache keys it (never a secret; not where it is served)."""
        return {"backend": self.backend, "model": self.model_id}

    def endpoint_identity(self) -> dict[str, Any]:
        """Where the model is served, where that is part of what a run's results were made with (its manifest and
        its methods' configurations): an endpoint's URL, without credentials."""
        return {}

    def profile(self) -> ModelProfile:
        """Size and capabilities as far as known: size declared in the options, else what the backend reads."""
        return ModelProfile(
            parameters_b=self.options.size_b or self.read_size_b(),
            label_scores=self.label_scores,
            hidden_state=self.gives_hidden_state,
            sha256=self.known_sha256(),
            in_process=self.serves_one_at_a_time,
        )

    def known_sha256(self) -> str | None:
        """The SHA-256 of the model's weights where it is known without reading them; None otherwise."""
        return None

    def read_size_b(self) -> float | None:
        """The model's size in billions of parameters, where the backend can read it; None otherwise."""
        return None

    async def probe_label_scores(self) -> bool | None:
        """Whether the model returns first-token log-probabilities: asked once, with one tiny request.

        True or False once known; None when the probe itself could not get an answer (the endpoint is down).
        """
        if self.label_scores is not None:
            return self.label_scores
        question = [Message(role="user", content="Is 2 greater than 1? Reply with one word: Yes or No.")]
        completion = await self.score_labels(question, ["Yes", "No"], stage="probe")
        if completion.ok:
            self.label_scores = True
        elif completion.failure is not None and completion.failure.kind is FailureKind.REQUEST:
            self.label_scores = False
        return self.label_scores

    def fingerprint(self) -> dict[str, Any]:
        """What decides this model's replies: its identity and the request settings that change them."""
        options = self.options
        return {
            **self.identity(),
            **self.endpoint_identity(),
            "mode": self.mode.value,
            "schema_in_prompt": self.shows_schema_in_prompt(),
            "temperature": options.temperature,
            "seed": options.seed,
            "max_tokens": options.max_tokens,
        }

    @property
    def mode(self) -> StructuredMode:
        return self.options.mode or self.default_mode

    def shows_schema_in_prompt(self) -> bool:
        """Whether the schema must be rendered into the prompt for the model to see it."""
        if self.options.schema_in_prompt is not None:
            return self.options.schema_in_prompt
        return self.mode not in self.modes_that_show_schema

    async def complete(
        self,
        messages: list[Message],
        schema: ReplySchema | None = None,
        *,
        stage: str = "default",
        prompt_version: str | None = None,
        lang: str = "en",
        reask: ReaskWording | None = None,
        **params: Any,
    ) -> Completion:
        """Return a Completion; never raises for model or transport failures.

        A reply that does not validate is asked again in the caller's `reask` wording (the methods give their prompt's
        language); without one, the re-ask carries the problems alone. `lang` is the language of the schema's text.
        """
        request = self._request(messages, schema, lang, self._params(params))
        base = Completion(
            backend=self.backend, model=self.model_id, params=request.params, prompt_version=prompt_version, stage=stage
        )
        key = self._calls.key(
            self.identity, request.messages, mode=request.mode.value, schema=request.schema, params=request.params
        )

        async def compute() -> Completion:
            wording = reask or PROBLEMS_ONLY
            return await reasked(self._sent, request, schema, reasks=self.options.reasks, wording=wording, base=base)

        completion = await self._calls.through(
            key,
            stage,
            decode=lambda record: _from_record(record, schema, base),
            compute=lambda: self._bounded(request, base, compute),
            record=lambda done: {
                "text": done.text,
                "finish_reason": done.finish_reason,
                "usage": done.usage.model_dump(),
                "attempts": done.attempts,
                "logprobs": done.logprobs,
            },
        )
        return counted(completion, self.ledger, self.health)

    async def score_labels(
        self,
        messages: list[Message],
        labels: list[str],
        *,
        stage: str = "default",
        prompt_version: str | None = None,
        hidden_state: bool = False,
    ) -> Completion:
        """Return a Completion whose `parsed` is the LabelScores of `labels` as the reply's first token.

        One forward pass, no generation; cached and counted like `complete`, never raises for model
        or transport failures. `hidden_state=True` also returns the model's final hidden state at that
        position (`LabelScores.state`), for a trained head; only backends that `gives_hidden_state` can.
        """
        if hidden_state and not self.gives_hidden_state:
            raise ConfigurationError(f"the {self.backend} backend gives no hidden state; use a local GGUF model")
        params = {k: v for k, v in self._params({}).items() if k != "max_tokens"}
        if hidden_state:  # in the cache key only when asked: earlier keys stay valid
            params["hidden_state"] = True
        request = Request(list(messages), params=params)
        base = Completion(
            backend=self.backend,
            model=self.model_id,
            params={**params, "labels": labels},
            prompt_version=prompt_version,
            stage=stage,
        )
        key = self._calls.key(self.identity, request.messages, kind="label_scores", labels=labels, params=params)

        async def compute() -> Completion:
            usage = Usage()

            async def send() -> tuple[tuple[dict[str, float | None], str | None], RawReply]:
                logprobs, reply = await self._label_logprobs(request.messages, labels, params, hidden_state)
                return (logprobs, reply.state), reply

            completion = base.model_copy(update={"usage": usage, "attempts": 1})
            try:
                estimate = self._estimated_tokens(request.messages, None, 1)
                (logprobs, state), completion.retries = await self._with_retries(send, usage, estimate)
                scores = LabelScores.from_logprobs(logprobs, state=state)
                completion.text, completion.parsed = scores.model_dump_json(), scores
            except Exception as error:
                completion.failure = failure_of(error)
                completion.retries = getattr(error, "retries_used", 0)
            return completion

        completion = await self._calls.through(
            key,
            stage,
            decode=lambda record: base.model_copy(
                update={
                    "text": record["text"],
                    "parsed": LabelScores.model_validate_json(record["text"]),
                    "cached": True,
                    "attempts": 1,
                }
            ),
            compute=lambda: self._bounded(request, base, compute),
            record=lambda done: {"text": done.text},
        )
        return counted(completion, self.ledger, self.health)

    def context_tokens(self) -> int | None:
        """The most prompt tokens a request may carry, checked before it is sent; None: the backend counts them
        itself (the local backend tokenizes the prompt and refuses it exactly)."""
        return None

    def _request(
        self, messages: list[Message], schema: ReplySchema | None, lang: str, params: dict[str, Any]
    ) -> Request:
        """The request `complete` sends: the schema shown in the prompt where the model must see it, and where the
        reply is held to a bounded schema (a grammar, structured outputs), its stage's tokens capped by it: a model
        that runs on is stopped there, not at max_tokens. Free-text modes may wrap the JSON."""
        if schema is None:
            return Request(list(messages), None, "reply", self.mode, params)
        schema_json = json_schema_of(schema)
        if self.mode in (StructuredMode.GRAMMAR, StructuredMode.JSON_SCHEMA):
            cap = reply_token_cap(schema_json)
            if cap is not None and cap < params["max_tokens"]:
                params["max_tokens"] = cap
        if self.shows_schema_in_prompt():
            messages = with_schema_text(list(messages), render_schema(schema_json, lang))
        return Request(list(messages), schema_json, schema_name(schema), self.mode, params)

    async def _bounded(
        self, request: Request, base: Completion, compute: Callable[[], Awaitable[Completion]]
    ) -> Completion:
        """`compute()` timed, unless the request is too long for the model's context: refused then, never sent."""
        started = time.perf_counter()
        too_long = oversized(request.messages, request.schema, self.context_tokens())
        if too_long is not None:
            completion = base.model_copy(update={"failure": too_long, "usage": Usage(), "attempts": 0})
        else:
            completion = await compute()
        completion.latency_s = time.perf_counter() - started
        return completion

    async def _sent(self, request: Request, usage: Usage) -> tuple[RawReply | None, int, Failure | None]:
        """One request sent within the endpoint's limits and retries: its reply, the retries, the failure if any."""
        estimate = self._estimated_tokens(request.messages, request.schema, request.params.get("max_tokens"))

        async def send() -> tuple[RawReply, RawReply]:
            reply = await self._send(request)
            return reply, reply

        try:
            reply, retries = await self._with_retries(send, usage, estimate)
            return reply, retries, None
        except Exception as error:
            return None, getattr(error, "retries_used", 0), failure_of(error)

    def _params(self, overrides: dict[str, Any]) -> dict[str, Any]:
        params: dict[str, Any] = {
            "temperature": self.options.temperature,
            "max_tokens": self.options.max_tokens,
        }
        if self.options.seed is not None:
            params["seed"] = self.options.seed
        params.update(overrides)
        return params

    async def close_connections(self) -> None:
        """Close what belongs to the running event loop (an endpoint's HTTP connections); the model stays usable, and
        its next call opens new ones. Called at the end of each synchronous API call, which runs on a loop of its
        own. Nothing to close by default."""
        return None

    async def aclose(self) -> None:
        """Release resources (HTTP clients, loaded weights); nothing to release by default."""
        return None


def _from_record(record: dict[str, Any], schema: ReplySchema | None, base: Completion) -> Completion | None:
    """A stored reply as a cache hit, filled into `base` (the call's own, made for it and given to nothing else: no
    copy on a hit); None (a miss) where the schema no longer accepts it."""
    parsed = None
    if schema is not None:
        try:
            parsed = parse_reply(record["text"], schema)
        except ValueError:
            return None
    base.text, base.parsed, base.cached = record["text"], parsed, True
    base.attempts, base.finish_reason, base.logprobs = (
        record["attempts"],
        record.get("finish_reason"),
        record.get("logprobs"),
    )
    return base
