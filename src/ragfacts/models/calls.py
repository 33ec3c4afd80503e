"""The layers every call passes through, shared by `ChatModel.complete()` and `ChatModel.score_labels()`.

- `CallCache`: a reply already stored, or an identical request already in flight, answers the call; a new
  successful reply is stored.
- `failure_of`: what an exception raised while sending becomes (a counted failure, never a crash).
- `oversized`: a prompt longer than the model's context is refused before it is sent.
- `counted`: the finished call's usage, counted in the run's ledger and in the endpoint's health.
"""

from __future__ import annotations

import asyncio
from collections import OrderedDict
from collections.abc import Awaitable, Callable
from typing import Any

from ragfacts.hashing import canonical_json, digest
from ragfacts.models._errors import BackendError, ConfigurationError
from ragfacts.models._types import Completion, Failure, FailureKind, Message
from ragfacts.models.cache import CACHE_KEY_VERSION, ResponseCache, cache_key
from ragfacts.models.ledger import UsageLedger
from ragfacts.models.ratelimit import estimated_tokens
from ragfacts.usage import Usage

_PLAIN = frozenset({str, int, float, bool, type(None)})


def _exact(value: Any) -> Any:
    """`value`, or a float's text: floats that compare equal may be written differently (0.0, -0.0)."""
    return repr(value) if type(value) is float else value


class CallCache:
    """Replies by request key: the persistent cache (optional), and identical requests in flight answered once."""

    def __init__(self, cache: ResponseCache | None, backend: str, model: str) -> None:
        self.cache = cache
        self.backend, self.model = backend, model
        self._inflight: dict[str, asyncio.Future[Completion]] = {}
        self._identity: str | None = None  # the model's identity, hashed once
        self._schemas: OrderedDict[int, tuple[dict[str, Any], str]] = OrderedDict()  # recent schemas' digests
        self._settings: OrderedDict[tuple[Any, ...], str] = OrderedDict()  # recent settings' canonical JSON

    def key(self, identity: Callable[[], dict[str, Any]], messages: list[Message], **request: Any) -> str | None:
        """The cache key of a request (None without a cache): everything that changes the output, no secret.

        The model is keyed by its `identity` (what it is, not where it is served: a local server restarted on another
        port keeps its cache), hashed once; a schema (the same object on every call of a stage) by its digest, hashed
        once per schema.
        """
        if self.cache is None:
            return None
        if self._identity is None:
            self._identity = digest(identity(), length=64)
        parts: dict[str, Any] = {"v": CACHE_KEY_VERSION, "model": self._identity}
        for name, value in request.items():
            parts[name] = self._schema_digest(value) if name == "schema" and value is not None else value
        return cache_key(parts, [(m.role, m.content) for m in messages], self._settings_json(parts))

    def _settings_json(self, parts: dict[str, Any]) -> str | None:
        """The canonical JSON of a request's settings, kept for the few settings a run sends (about one per stage):
        the same text, made once. Only settings of plain values are kept, by their types and floats by their text
        (`0`, `0.0`, `-0.0` and `False` are equal in Python and written differently); None for the others (the caller
        makes their text)."""
        memo: list[tuple[Any, ...]] = []
        for name, value in parts.items():
            if type(value) is dict:
                if not all(type(v) in _PLAIN and type(k) is str for k, v in value.items()):
                    return None
                memo.append((name, tuple((k, type(v), _exact(v)) for k, v in value.items())))
            elif type(value) in _PLAIN:
                memo.append((name, type(value), _exact(value)))
            else:
                return None
        key = tuple(memo)
        known = self._settings.get(key)
        if known is None:
            known = self._settings[key] = canonical_json(parts)
            if len(self._settings) > 256:
                self._settings.popitem(last=False)
        return known

    def _schema_digest(self, schema: dict[str, Any]) -> str:
        known = self._schemas.get(id(schema))
        if known is not None and known[0] is schema:  # the object is kept, so its id is not reused while known
            self._schemas.move_to_end(id(schema))
            return known[1]
        known = self._schemas[id(schema)] = (schema, digest(schema, length=64))
        if len(self._schemas) > 64:  # a stage's schema is one object for the run; one made per call is seen once
            self._schemas.popitem(last=False)
        return known[1]

    async def through(
        self,
        key: str | None,
        stage: str,
        *,
        decode: Callable[[dict[str, Any]], Completion | None],
        compute: Callable[[], Awaitable[Completion]],
        record: Callable[[Completion], dict[str, Any]],
    ) -> Completion:
        """The call's completion: `decode` of the stored record (None: a miss), else the reply of the identical call
        in flight, else `compute()`, whose successful result is stored as `record` of it."""
        if key is None or self.cache is None:
            return await compute()
        stored = self.cache.get(key)
        hit = decode(stored) if stored is not None else None
        if hit is None:
            hit = await self._shared(key, stage)
        if hit is not None:
            return hit
        self._inflight[key] = asyncio.get_running_loop().create_future()
        completion: Completion | None = None
        try:
            completion = await compute()
            if completion.ok:
                self.cache.put(key, backend=self.backend, model=self.model, stage=stage, record=record(completion))
        finally:
            self._release(key, completion)
        return completion

    async def _shared(self, key: str, stage: str) -> Completion | None:
        """The reply to an identical request already in flight, as a cache hit; None if there is none."""
        pending = self._inflight.get(key)
        if pending is None:
            return None
        await asyncio.wait({pending})  # not `await pending`: its cancellation must not cancel this caller
        if pending.cancelled() or not pending.result().ok:
            return None
        update = {"cached": True, "usage": Usage(), "latency_s": 0.0, "stage": stage}
        return pending.result().model_copy(update=update)

    def _release(self, key: str, completion: Completion | None) -> None:
        future = self._inflight.pop(key, None)
        if future is not None and not future.done():
            if completion is None:
                future.cancel()
            else:
                future.set_result(completion)


def failure_of(error: Exception) -> Failure:
    """The failure a call records for an error raised while sending. A configuration error is raised on: it is the
    user's to fix, not a reply to count."""
    if isinstance(error, ConfigurationError):
        raise error
    if isinstance(error, BackendError):
        kind = FailureKind.TRANSIENT if error.transient else FailureKind.REQUEST
        return Failure(kind=kind, message=str(error), status=error.status)
    # no label among the candidates, or a backend bug: a failure, not a crash that kills the batch
    return Failure(kind=FailureKind.BACKEND, message=f"{type(error).__name__}: {error}")


def oversized(messages: list[Message], schema: dict[str, Any] | None, limit: int | None) -> Failure | None:
    """A request too long for a context of `limit` tokens (None: the backend counts itself): refused before sending,
    never truncated."""
    if limit is None:
        return None
    size = estimated_tokens([m.content for m in messages], schema, 0)
    if size <= limit:
        return None
    return Failure(
        kind=FailureKind.REQUEST,
        message=f"the prompt is about {size:,} tokens, more than the model's context of {limit:,} tokens "
        "(declare it with -M n_ctx=); not sent",
    )


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


def counted(completion: Completion, ledger: UsageLedger, health: EndpointHealth) -> Completion:
    """Complete the completion's usage, count it in the ledger and the endpoint's health, return it.

    The usage is the completion's own (a reply's, a new one for a hit or a shared reply), completed in place, on its
    values as `Usage.add` writes them: no copy per call."""
    completion.usage.__dict__.update(
        completions=1,
        cache_hits=int(completion.cached),
        reasks=max(completion.attempts - 1, 0),
        retries=completion.retries,
        failures=int(not completion.ok),
    )
    ledger.record(completion)
    health.observe(completion)
    return completion
