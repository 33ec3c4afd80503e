"""Per-call timings of the in-process llama.cpp model, for the local-backend benchmarks (not a benchmark itself).

`CallTimer` instruments one loaded `llama_cpp.Llama` (the instance, not the class) and one `LlamaCppModel`:
for every chat completion it records the stage that asked for it, the prompt tokens, the prompt tokens
llama.cpp really evaluated (what prefix reuse saves), prompt-evaluation and generation time from llama.cpp's
own counters (`llama_perf_context`, the numbers `llama_perf_context_print` prints), and the time spent in the
sampler (grammar included), timed around each `Llama.sample` call.

`chat_tokens` renders messages with the GGUF's chat template and tokenizes them, as the backend does; a
vocabulary-only `Llama` (`vocab_only=True`) is enough for it, so prompts can be counted without the weights.
"""

from __future__ import annotations

import contextvars
import time
from dataclasses import asdict, dataclass
from typing import Any

import llama_cpp
from llama_cpp.llama_chat_format import Jinja2ChatFormatter

from ragfacts.models import Message
from ragfacts.models.local.llamacpp import LlamaCppModel

_STAGE: contextvars.ContextVar[str] = contextvars.ContextVar("stage", default="default")


@dataclass
class CallTiming:
    """One chat completion as llama.cpp ran it."""

    stage: str
    prompt_tokens: int  # the whole prompt, as the reply's usage counts it
    evaluated_prompt_tokens: int  # prompt tokens llama.cpp evaluated (the rest came from the KV cache)
    prompt_eval_s: float
    completion_tokens: int
    generation_eval_s: float  # the model's forward passes for the generated tokens
    sample_s: float  # the sampler chain: penalties, grammar, greedy choice
    samples: int
    wall_s: float
    finish_reason: str | None
    grammar: bool

    @property
    def other_s(self) -> float:
        """Time in neither the model nor the sampler: Python, detokenising, chat formatting, building the grammar."""
        return self.wall_s - self.prompt_eval_s - self.generation_eval_s - self.sample_s

    def record(self) -> dict[str, Any]:
        return {
            **{k: round(v, 4) if isinstance(v, float) else v for k, v in asdict(self).items()},
            "other_s": round(self.other_s, 4),
        }


class CallTimer:
    """Records a `CallTiming` per chat completion of `model`; with `reuse_prefix=False`, each one starts cold.

    Prefix reuse is defeated here, in the benchmark, by `Llama.reset()` before each request: the KV cache then
    holds no tokens, so llama.cpp's longest-common-prefix match finds nothing and evaluates the whole prompt.
    """

    def __init__(self, model: LlamaCppModel, *, reuse_prefix: bool = True) -> None:
        self.llama: Any = model._load()  # the loaded weights; loading them is not part of any call
        self.reuse_prefix = reuse_prefix
        self.calls: list[CallTiming] = []
        self.requests: list[dict[str, Any]] = []  # every chat-completion request, as llama-cpp-python got it
        self._sampling = [0.0, 0]
        self._wrap_stage(model)
        self._wrap_llama()

    @property
    def last_request(self) -> dict[str, Any]:
        return self.requests[-1]

    def _wrap_stage(self, model: LlamaCppModel) -> None:
        # The stage travels in a context variable: asyncio tasks and asyncio.to_thread copy the context, so
        # the backend's worker thread sees the stage of the call it serves, whatever order calls queue in.
        complete = model.complete

        async def staged(messages: list[Message], schema: Any = None, **kwargs: Any) -> Any:
            token = _STAGE.set(kwargs.get("stage", "default"))
            try:
                return await complete(messages, schema, **kwargs)
            finally:
                _STAGE.reset(token)

        model.complete = staged  # type: ignore[method-assign]

    def _wrap_llama(self) -> None:
        llama, create, sample = self.llama, self.llama.create_chat_completion, self.llama.sample
        timer = self

        def timed_sample(*args: Any, **kwargs: Any) -> int:
            started = time.perf_counter()
            try:
                return sample(*args, **kwargs)
            finally:
                timer._sampling[0] += time.perf_counter() - started
                timer._sampling[1] += 1

        def timed_create(**request: Any) -> Any:
            timer.requests.append(request)
            if not timer.reuse_prefix:
                llama.reset()
            # Finish any decode still queued (llama.cpp decodes asynchronously) before the counters restart.
            llama_cpp.llama_synchronize(llama._ctx.ctx)
            llama_cpp.llama_perf_context_reset(llama._ctx.ctx)
            timer._sampling = [0.0, 0]
            started = time.perf_counter()
            response = create(**request)
            llama_cpp.llama_synchronize(llama._ctx.ctx)
            wall = time.perf_counter() - started
            perf = llama_cpp.llama_perf_context(llama._ctx.ctx)
            usage = response.get("usage") or {}
            timer.calls.append(
                CallTiming(
                    stage=_STAGE.get(),
                    prompt_tokens=int(usage.get("prompt_tokens", 0)),
                    # A suffix of one token is decoded as a single token, which llama.cpp counts as generation.
                    evaluated_prompt_tokens=perf.n_p_eval,
                    prompt_eval_s=perf.t_p_eval_ms / 1000,
                    completion_tokens=int(usage.get("completion_tokens", 0)),
                    generation_eval_s=perf.t_eval_ms / 1000,
                    sample_s=timer._sampling[0],
                    samples=timer._sampling[1],
                    wall_s=wall,
                    finish_reason=response["choices"][0].get("finish_reason"),
                    grammar="response_format" in request,
                )
            )
            return response

        llama.sample = timed_sample
        llama.create_chat_completion = timed_create


def totals(calls: list[CallTiming]) -> dict[str, Any]:
    """The sums over calls that the reports compare."""
    keys = ("prompt_tokens", "evaluated_prompt_tokens", "prompt_eval_s", "completion_tokens", "generation_eval_s")
    summed: dict[str, Any] = {key: sum(getattr(c, key) for c in calls) for key in keys}
    summed.update(
        calls=len(calls),
        sample_s=sum(c.sample_s for c in calls),
        other_s=sum(c.other_s for c in calls),
        wall_s=sum(c.wall_s for c in calls),
    )
    return {k: round(v, 3) if isinstance(v, float) else v for k, v in summed.items()}


def chat_tokens(llama: Any, messages: list[dict[str, str]]) -> list[int]:
    """The tokens of `messages` rendered with the GGUF's chat template, up to where the reply starts."""
    eos, bos = llama.token_eos(), llama.token_bos()
    formatter = Jinja2ChatFormatter(
        template=llama.metadata["tokenizer.chat_template"],
        eos_token=llama._model.token_get_text(eos) if eos != -1 else "",
        bos_token=llama._model.token_get_text(bos) if bos != -1 else "",
    )
    prompt = formatter(messages=messages).prompt
    return llama.tokenize(prompt.encode("utf-8"), add_bos=False, special=True)


def common_prefix(a: list[int], b: list[int]) -> int:
    """The length of the longest common prefix of two token lists."""
    n = 0
    for x, y in zip(a, b, strict=False):
        if x != y:
            break
        n += 1
    return n
