"""The chat-model interface every method uses; backends only send one request."""

from __future__ import annotations

import asyncio
import time
from abc import ABC, abstractmethod
from typing import Any, ClassVar, TypeVar

from pydantic import BaseModel

from ragfacts.models._errors import BackendError, ConfigurationError
from ragfacts.models._types import (
    Completion,
    Failure,
    FailureKind,
    LabelScores,
    Message,
    ModelProfile,
    ModelSpec,
    RawReply,
    StructuredMode,
)
from ragfacts.models.cache import CACHE_KEY_VERSION, ResponseCache, cache_key
from ragfacts.models.ledger import UsageLedger
from ragfacts.models.options import ModelOptions, options_as
from ragfacts.models.ratelimit import estimated_tokens
from ragfacts.models.structured import describe_error, json_schema_of, parse_reply, render_schema, reply_token_cap
from ragfacts.models.transport import Transport
from ragfacts.prompts import LANGS, load_prompt
from ragfacts.usage import Usage

T = TypeVar("T")


def _model_facing(name: str, lang: str, **values: str) -> str:
    """A message to the model kept as a prompt file (prompts/<lang>/<name>.md); English for other languages."""
    return load_prompt(name, lang if lang in LANGS else "en").render(**values).rstrip("\n")


class EndpointHealth:
    """Consecutive completions that failed because the endpoint could not be used (unreachable, refusing us).

    Any reply from the server resets the count; a runner reads it to stop a run early instead of writing a
    failed result for every row.
    """

    def __init__(self) -> None:
        self.consecutive_failures = 0
        self.last_failure: Failure | None = None

    def observe(self, completion: Completion) -> None:
        if completion.failure is not None and completion.failure.endpoint_unusable:
            self.consecutive_failures += 1
            self.last_failure = completion.failure
        elif not completion.cached:
            self.consecutive_failures = 0


class ChatModel(Transport, ABC):
    """A chat model with structured outputs, validation and re-ask, retries, cache and ledger.

    Subclasses implement `_send` (one request in, text and usage out) and say which structured
    modes they support; everything else is shared.
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
        self.cache = cache
        self.ledger = ledger if ledger is not None else UsageLedger()
        self.health = EndpointHealth()
        self.label_scores: bool | None = None  # known once probed (or by the backend's nature)
        self._inflight: dict[str, asyncio.Future[Completion]] = {}

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
    async def _send(
        self,
        messages: list[Message],
        *,
        schema: dict[str, Any] | None,
        schema_name: str,
        mode: StructuredMode,
        params: dict[str, Any],
    ) -> RawReply:
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
        """What identifies this model in a cache key (never a secret)."""
        return {"backend": self.backend, "model": self.model_id}

    def profile(self) -> ModelProfile:
        """Size and capabilities as far as known: size declared in the options, else what the backend reads."""
        return ModelProfile(
            parameters_b=self.options.size_b or self.read_size_b(),
            label_scores=self.label_scores,
            hidden_state=self.gives_hidden_state,
            sha256=self.known_sha256(),
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
        schema: type[BaseModel] | None = None,
        *,
        stage: str = "default",
        prompt_version: str | None = None,
        lang: str = "en",
        **params: Any,
    ) -> Completion:
        """Return a Completion; never raises for model or transport failures."""
        params = self._params(params)
        schema_json = json_schema_of(schema) if schema is not None else None
        # Where the reply is held to the schema (a grammar, structured outputs), a bounded schema caps its stage's
        # tokens: a model that runs on is stopped there, not at max_tokens. Free-text modes may wrap the JSON.
        constrained = self.mode in (StructuredMode.GRAMMAR, StructuredMode.JSON_SCHEMA)
        cap = reply_token_cap(schema_json) if schema_json is not None and constrained else None
        if cap is not None and cap < params["max_tokens"]:
            params["max_tokens"] = cap
        messages = list(messages)
        if schema_json is not None and self.shows_schema_in_prompt():
            messages = _with_schema_text(messages, render_schema(schema_json, lang))
        base = Completion(
            backend=self.backend,
            model=self.model_id,
            params=params,
            prompt_version=prompt_version,
            stage=stage,
        )
        key = self._request_key(messages, mode=self.mode.value, schema=schema_json, params=params)
        if key is not None:
            hit = self._from_cache(key, schema, base) or await self._shared(key, base)
            if hit is not None:
                return self._finish(hit)
            self._inflight[key] = asyncio.get_running_loop().create_future()
        completion: Completion | None = None
        try:
            started = time.perf_counter()
            too_long = self._oversized(messages, schema_json)
            if too_long is not None:
                completion = base.model_copy(update={"failure": too_long, "usage": Usage(), "attempts": 0})
            else:
                completion = await self._complete_uncached(messages, schema, schema_json, params, lang, base)
            completion.latency_s = time.perf_counter() - started
            if self.cache is not None and key is not None and completion.ok:
                self.cache.put(
                    key,
                    backend=self.backend,
                    model=self.model_id,
                    stage=stage,
                    record={
                        "text": completion.text,
                        "finish_reason": completion.finish_reason,
                        "usage": completion.usage.model_dump(),
                        "attempts": completion.attempts,
                        "logprobs": completion.logprobs,
                    },
                )
        finally:
            if key is not None:
                self._release(key, completion)
        return self._finish(completion)

    def context_tokens(self) -> int | None:
        """The most prompt tokens a request may carry, checked before it is sent; None: the backend counts them
        itself (the local backend tokenizes the prompt and refuses it exactly)."""
        return None

    def _oversized(self, messages: list[Message], schema_json: dict[str, Any] | None) -> Failure | None:
        """A request too long for the model's context: refused before sending, never truncated."""
        limit = self.context_tokens()
        if limit is None:
            return None
        size = estimated_tokens([m.content for m in messages], schema_json, 0)
        if size <= limit:
            return None
        return Failure(
            kind=FailureKind.REQUEST,
            message=f"the prompt is about {size:,} tokens, more than the model's context of {limit:,} tokens "
            "(declare it with -M n_ctx=); not sent",
        )

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
        base = Completion(
            backend=self.backend,
            model=self.model_id,
            params={**params, "labels": labels},
            prompt_version=prompt_version,
            stage=stage,
        )
        key = self._request_key(messages, kind="label_scores", labels=labels, params=params)
        if key is not None and self.cache is not None:
            record = self.cache.get(key)
            if record is not None:
                hit = base.model_copy(
                    update={
                        "text": record["text"],
                        "parsed": LabelScores.model_validate_json(record["text"]),
                        "cached": True,
                        "attempts": 1,
                    }
                )
                return self._finish(hit)
        started = time.perf_counter()
        usage = Usage()
        completion = base.model_copy(update={"usage": usage, "attempts": 1})
        too_long = self._oversized(messages, None)
        if too_long is not None:
            completion.failure, completion.attempts = too_long, 0
            return self._finish(completion)
        try:

            async def send() -> tuple[tuple[dict[str, float | None], str | None], RawReply]:
                logprobs, reply = await self._label_logprobs(messages, labels, params, hidden_state)
                return (logprobs, reply.state), reply

            estimate = self._estimated_tokens(messages, None, 1)
            (logprobs, state), retries = await self._with_retries(send, usage, estimate)
            scores = LabelScores.from_logprobs(logprobs, state=state)
            completion = completion.model_copy(
                update={
                    "text": scores.model_dump_json(),
                    "parsed": scores,
                    "retries": retries,
                }
            )
        except BackendError as error:
            kind = FailureKind.TRANSIENT if error.transient else FailureKind.REQUEST
            completion.retries = error.retries_used
            completion.failure = Failure(kind=kind, message=str(error), status=error.status)
        except ConfigurationError:
            raise
        except Exception as error:  # no label among the candidates, or a backend bug: a failure, not a crash
            completion.failure = Failure(kind=FailureKind.BACKEND, message=f"{type(error).__name__}: {error}")
        completion.latency_s = time.perf_counter() - started
        if self.cache is not None and key is not None and completion.ok:
            self.cache.put(
                key, backend=self.backend, model=self.model_id, stage=stage, record={"text": completion.text}
            )
        return self._finish(completion)

    def _finish(self, completion: Completion) -> Completion:
        """Complete the completion's usage, count it in the ledger and the endpoint's health, return it."""
        usage = completion.usage.model_copy(
            update={
                "completions": 1,
                "cache_hits": int(completion.cached),
                "reasks": max(completion.attempts - 1, 0),
                "retries": completion.retries,
                "failures": int(not completion.ok),
            }
        )
        completion.usage = usage
        self.ledger.record(completion)
        self.health.observe(completion)
        return completion

    async def _shared(self, key: str, base: Completion) -> Completion | None:
        """The reply to an identical request already in flight, as a cache hit; None if there is none."""
        pending = self._inflight.get(key)
        if pending is None:
            return None
        await asyncio.wait({pending})  # not `await pending`: its cancellation must not cancel this caller
        if pending.cancelled() or not pending.result().ok:
            return None
        shared = pending.result()
        update = {"cached": True, "usage": Usage(), "latency_s": 0.0, "stage": base.stage}
        return shared.model_copy(update=update)

    def _release(self, key: str, completion: Completion | None) -> None:
        future = self._inflight.pop(key, None)
        if future is not None and not future.done():
            if completion is None:
                future.cancel()
            else:
                future.set_result(completion)

    def _request_key(self, messages: list[Message], **request: Any) -> str | None:
        """The cache key of a request (None without a cache): everything that changes the output, no secret."""
        if self.cache is None:
            return None
        messages_json = [m.model_dump() for m in messages]
        return cache_key({"v": CACHE_KEY_VERSION, **self.identity(), "messages": messages_json, **request})

    def _params(self, overrides: dict[str, Any]) -> dict[str, Any]:
        params: dict[str, Any] = {
            "temperature": self.options.temperature,
            "max_tokens": self.options.max_tokens,
        }
        if self.options.seed is not None:
            params["seed"] = self.options.seed
        params.update(overrides)
        return params

    def _from_cache(self, key: str, schema: type[BaseModel] | None, base: Completion) -> Completion | None:
        assert self.cache is not None
        record = self.cache.get(key)
        if record is None:
            return None
        parsed = None
        if schema is not None:
            try:
                parsed = parse_reply(record["text"], schema)
            except ValueError:
                return None  # an entry the schema no longer accepts is a miss, not a result
        return base.model_copy(
            update={
                "text": record["text"],
                "parsed": parsed,
                "cached": True,
                "attempts": record["attempts"],
                "finish_reason": record.get("finish_reason"),
                "logprobs": record.get("logprobs"),
            }
        )

    async def _complete_uncached(
        self,
        messages: list[Message],
        schema: type[BaseModel] | None,
        schema_json: dict[str, Any] | None,
        params: dict[str, Any],
        lang: str,
        base: Completion,
    ) -> Completion:
        usage = Usage()
        retries = 0
        conversation = list(messages)
        name = schema.__name__ if schema is not None else "reply"
        reply: RawReply | None = None
        failure: Failure | None = None
        for attempt in range(1, self.options.reasks + 2):
            try:
                reply, used_retries = await self._with_retries(
                    lambda c=conversation: self._sent(c, schema_json, name, params),
                    usage,
                    self._estimated_tokens(conversation, schema_json, params.get("max_tokens")),
                )
                retries += used_retries
            except BackendError as error:
                retries += error.retries_used
                kind = FailureKind.TRANSIENT if error.transient else FailureKind.REQUEST
                failure = Failure(
                    kind=kind, message=str(error), last_text=reply.text if reply else None, status=error.status
                )
                return base.model_copy(
                    update={"usage": usage, "attempts": attempt, "retries": retries, "failure": failure}
                )
            except Exception as error:  # a backend bug must not kill a batch
                return base.model_copy(
                    update={
                        "usage": usage,
                        "attempts": attempt,
                        "retries": retries,
                        "failure": Failure(kind=FailureKind.BACKEND, message=f"{type(error).__name__}: {error}"),
                    }
                )
            done = base.model_copy(
                update={
                    "text": reply.text,
                    "usage": usage,
                    "attempts": attempt,
                    "retries": retries,
                    "finish_reason": reply.finish_reason,
                    "logprobs": reply.logprobs,
                }
            )
            if schema is None:
                return done
            problems: list[str] = []
            if reply.finish_reason == "length":
                problems.append(_model_facing("reask_truncated", lang))
            try:
                done.parsed = parse_reply(reply.text, schema)
                return done
            except ValueError as error:
                problems.append(describe_error(error))
            kind = FailureKind.TRUNCATED if reply.finish_reason == "length" else FailureKind.INVALID_OUTPUT
            failure = Failure(kind=kind, message="\n".join(problems), last_text=reply.text)
            conversation = [
                *conversation,
                Message(role="assistant", content=reply.text),
                Message(role="user", content=_model_facing("reask", lang, errors="\n".join(problems))),
            ]
        return done.model_copy(update={"failure": failure, "parsed": None})

    async def _sent(
        self, messages: list[Message], schema: dict[str, Any] | None, name: str, params: dict[str, Any]
    ) -> tuple[RawReply, RawReply]:
        reply = await self._send(messages, schema=schema, schema_name=name, mode=self.mode, params=params)
        return reply, reply

    async def aclose(self) -> None:
        """Release resources (HTTP clients, loaded weights); nothing to release by default."""
        return None


def _with_schema_text(messages: list[Message], schema_text: str) -> list[Message]:
    """Append the rendered schema to the last user message."""
    for index in range(len(messages) - 1, -1, -1):
        if messages[index].role == "user":
            updated = Message(role="user", content=f"{messages[index].content}\n\n{schema_text}")
            return [*messages[:index], updated, *messages[index + 1 :]]
    return [*messages, Message(role="user", content=schema_text)]
