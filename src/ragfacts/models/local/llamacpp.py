"""In-process GGUF models through llama-cpp-python, with grammar-constrained JSON (loading: `llama_load`)."""

from __future__ import annotations

import asyncio
import contextlib
import hashlib
import threading
import time
from collections.abc import Iterator
from pathlib import Path
from typing import Any

from ragfacts.models._errors import BackendError, ConfigurationError
from ragfacts.models._types import Message, ModelSpec, RawReply, Request, StructuredMode, encode_state
from ragfacts.models.base import ChatModel
from ragfacts.models.labels import match_label_logprobs
from ragfacts.models.local.embedded import DEFAULT_MODEL, ensure_default_model, is_verified, quality_notice
from ragfacts.models.local.gguf import read_gguf_info
from ragfacts.models.local.llama_load import (
    DEFAULT_CONTEXT,
    GPU_BUILD_HINT,
    LoadSettings,
    context_size,
    gpu_offload_supported,
    import_llama,
    llama_debug,
    refuse_offload_without_gpu,
    special_token_texts,
)
from ragfacts.models.local.local_limits import CLOSE_WAIT_S, CallGuard, count_later
from ragfacts.models.options import LocalModelOptions, ModelOptions, options_as
from ragfacts.models.registry import backend
from ragfacts.paths import ragfacts_home
from ragfacts.text import neutralise_special_tokens
from ragfacts.usage import Usage


@backend("local")
class LlamaCppModel(ChatModel):
    """A GGUF model run in-process. One loaded model is shared; requests queue on a lock.

    The grammar only restricts tokens, so the schema is always rendered into the prompt: without it a
    1.5B model answered "True" for 100% of facts, even for answers that lack them.
    """

    spec_forms = "local (the embedded model), local:/path/to/model.gguf"
    default_mode = StructuredMode.GRAMMAR
    serves_one_at_a_time = True  # one loaded model behind a lock
    modes_that_show_schema: frozenset[StructuredMode] = frozenset()
    Options = LocalModelOptions
    options: LocalModelOptions

    def __init__(
        self,
        model_path: Path,
        options: ModelOptions | None = None,
        *,
        model_name: str | None = None,
        **kwargs: Any,
    ) -> None:
        path = Path(model_path)
        super().__init__(model_name or path.name, options, **kwargs)
        if self.mode not in (StructuredMode.GRAMMAR, StructuredMode.JSON_TEXT):
            raise ConfigurationError("the local backend supports the grammar and json_text modes")
        if not path.is_file():
            raise ConfigurationError(f"no GGUF file at {path}")
        refuse_offload_without_gpu(self.options)
        self.model_path = path
        self.n_ctx = context_size(self.options)  # known before loading: it enters the cache identity
        self._load_settings: LoadSettings | None = None
        self._llama: Any = None
        self._formatter: Any = None
        self._specials: frozenset[str] = frozenset()  # the loaded model's special-token texts
        self.reuse_prefix = True  # keep the KV cache of a prompt prefix shared with the previous request
        self.evaluated_tokens = 0  # prompt tokens label scoring really evaluated (what prefix reuse saves)
        self.label_scores = True  # the logits are ours to read
        self._size_b: float | None = None
        self._sha256: str | None = None
        self._lock = threading.Lock()
        self._guard: CallGuard | None = None  # the call holding the lock: llama.cpp's abort callback reads it
        self._abort_callback: Any = None  # kept alive: llama.cpp calls it during every decode

    @classmethod
    def spec_from(cls, name: str | None, base_url: str | None) -> ModelSpec:
        """`local` (the embedded default), `local:/path/file.gguf` or `local:hf:REPO/FILE.gguf`; no base URL."""
        return ModelSpec(cls.backend, name)

    @classmethod
    def notice(cls, spec: ModelSpec) -> str | None:
        """The embedded default model says what it measured as a judge, and what judges better."""
        return quality_notice() if spec.name is None else None

    @classmethod
    def build(cls, spec: ModelSpec, options: ModelOptions | None, **shared: Any) -> LlamaCppModel:
        return cls.from_spec(spec.name, options, **shared)

    @classmethod
    def from_spec(cls, name: str | None, options: ModelOptions | None = None, **kwargs: Any) -> LlamaCppModel:
        """`local` (embedded default), `local:/path/file.gguf`, or `local:hf:REPO/FILE.gguf` (online)."""
        import_llama()
        refuse_offload_without_gpu(options_as(cls.Options, options, cls.backend))  # before assembling weights
        if name is None:
            path = ensure_default_model(ragfacts_home() / "models")
            return cls(path, options, model_name=DEFAULT_MODEL.file_name, **kwargs)
        if name.startswith("hf:"):
            return cls(_download_from_hub(name[3:]), options, **kwargs)
        return cls(Path(name).expanduser(), options, **kwargs)

    def read_size_b(self) -> float | None:
        """The parameter count from the GGUF header (read once; the weights are not loaded for it)."""
        if self._size_b is None:
            try:
                self._size_b = read_gguf_info(self.model_path).billions
            except (OSError, ValueError):
                return None
        return self._size_b

    @property
    def load_settings(self) -> LoadSettings:
        """How the model is (or will be) loaded: context, threads, GPU layers."""
        if self._load_settings is None:
            self._load_settings = LoadSettings.resolve(self.options)
        return self._load_settings

    def identity(self) -> dict[str, Any]:
        # Name and size identify a GGUF cheaply; hashing 1 GB on every run would not be. The context changes
        # what fits (and so the replies); threads and GPU layers only change the speed.
        return {**super().identity(), "size": self.model_path.stat().st_size, "n_ctx": self.n_ctx}

    def _load(self) -> Any:
        if self._llama is None:
            llama_cpp = import_llama()
            settings = self.load_settings
            llama = llama_cpp.Llama(
                model_path=str(self.model_path),
                n_ctx=settings.n_ctx,
                n_threads=settings.n_threads,
                n_gpu_layers=settings.n_gpu_layers,
                seed=self.options.seed if self.options.seed is not None else llama_cpp.LLAMA_DEFAULT_SEED,
                verbose=llama_debug(),
            )
            self._specials = special_token_texts(llama)
            self._llama = llama
            # llama.cpp asks this between the steps of every decode (prompt or generated token): returning True
            # aborts it, and llama_decode fails. That is how a call past --timeout, or whose caller went away, ends.
            self._abort_callback = llama_cpp.ggml_abort_callback(self._should_abort)
            llama_cpp.llama_set_abort_callback(self._llama._ctx.ctx, self._abort_callback, None)
        return self._llama

    async def _send(self, request: Request) -> RawReply:
        """Generate in a worker thread, within --timeout; a caller that goes away stops the generation."""
        guard = CallGuard(self.options.timeout_s)
        loop = asyncio.get_running_loop()
        guard.abandoned = lambda usage: count_later(loop, self.ledger, usage)
        try:
            return await asyncio.to_thread(self._send_blocking, request, guard)
        except asyncio.CancelledError:
            guard.cancel.set()  # the thread stops at its next token and frees the model
            raise

    def _send_blocking(self, request: Request, guard: CallGuard) -> RawReply:
        messages = request.messages
        body: dict[str, Any] = dict(request.params)
        if request.schema is not None and request.mode is StructuredMode.GRAMMAR:
            body["response_format"] = {"type": "json_object", "schema": request.schema}
        llama_cpp = import_llama()
        body["logits_processor"] = llama_cpp.LogitsProcessorList([guard])  # counts the generated tokens
        with self._guarded(guard):
            llama = self._load()
            body["messages"] = self._prompt_messages(messages)
            started = time.perf_counter()
            if not self.reuse_prefix:
                llama.reset()
            try:
                response = llama.create_chat_completion(**body)
            except ValueError as error:  # e.g. the prompt exceeds the context window
                raise BackendError(f"llama.cpp refused the request: {error}", transient=False) from error
            except RuntimeError:
                if not guard.due():
                    raise
                llama.reset()  # the KV cache holds a cut generation: start clean
                prompt_tokens = len(llama.tokenize(self._chat_prompt(llama, messages).encode("utf-8"), special=True))
                spent = RawReply(
                    text="",
                    finish_reason="stopped",
                    prompt_tokens=prompt_tokens,
                    completion_tokens=guard.tokens,
                    seconds=time.perf_counter() - started,
                )
                if guard.cancel.is_set():  # nobody awaits this call any more: its cost is counted here
                    spent_usage = Usage(failures=1)
                    spent.counted_in(spent_usage)
                    guard.abandoned(spent_usage)
                raise BackendError(guard.reason(), transient=False, reply=spent) from None
            seconds = time.perf_counter() - started
        choice = response["choices"][0]
        usage = response.get("usage") or {}
        return RawReply(
            text=choice["message"].get("content") or "",
            finish_reason=choice.get("finish_reason"),
            prompt_tokens=int(usage.get("prompt_tokens", 0)),
            completion_tokens=int(usage.get("completion_tokens", 0)),
            seconds=seconds,
        )

    def _should_abort(self, _data: Any) -> bool:
        return self._guard is not None and self._guard.due()

    @contextlib.contextmanager
    def _guarded(self, guard: CallGuard) -> Iterator[None]:
        """Hold the model for one call, bounded by `guard`: its lock (the call's --timeout runs from when it is
        held) and the abort callback's view of the call. Loading the weights (the first call's) does not count
        against the call's --timeout either: it is the model's start, not the call's work."""
        with guard.holding(self._lock):
            if self._llama is None:
                loading = time.monotonic()
                self._load()
                guard.deadline += time.monotonic() - loading
            self._guard = guard
            try:
                yield
            finally:
                self._guard = None

    @property
    def gives_hidden_state(self) -> bool:
        return True

    def known_sha256(self) -> str | None:
        """The embedded model's SHA-256 (verified when it was assembled); other files once `weights_sha256` ran."""
        embedded = self.model_path.name == DEFAULT_MODEL.file_name
        if self._sha256 is None and embedded and is_verified(self.model_path, DEFAULT_MODEL.size, DEFAULT_MODEL.sha256):
            self._sha256 = DEFAULT_MODEL.sha256
        return self._sha256

    def weights_sha256(self) -> str:
        """The SHA-256 of the GGUF file (read once: ~3 s a GB), e.g. to check that a trained head fits it."""
        if self.known_sha256() is None:
            digest = hashlib.sha256()
            with self.model_path.open("rb") as source:
                while chunk := source.read(8 << 20):
                    digest.update(chunk)
            self._sha256 = digest.hexdigest()
        assert self._sha256 is not None
        return self._sha256

    async def _label_logprobs(
        self, messages: list[Message], labels: list[str], params: dict[str, Any], hidden_state: bool = False
    ) -> tuple[dict[str, float | None], RawReply]:
        return await asyncio.to_thread(self._label_logprobs_blocking, messages, labels, hidden_state)

    def _label_logprobs_blocking(
        self, messages: list[Message], labels: list[str], hidden_state: bool = False
    ) -> tuple[dict[str, float | None], RawReply]:
        import numpy as np

        guard = CallGuard(self.options.timeout_s)
        with self._guarded(guard):
            llama = self._load()
            started = time.perf_counter()
            prompt = self._chat_prompt(llama, messages)
            tokens = llama.tokenize(prompt.encode("utf-8"), add_bos=False, special=True)
            if len(tokens) >= self.n_ctx:
                raise BackendError(
                    f"the prompt ({len(tokens)} tokens) exceeds the context ({self.n_ctx})", transient=False
                )
            try:
                evaluated, state = self._eval_reusing_prefix(llama, tokens, hidden_state)
            except RuntimeError:
                if not guard.due():
                    raise
                llama.reset()
                raise BackendError(guard.reason(), transient=False) from None
            # After eval only the last position has logits (logits_all=False): the first reply token.
            logits = np.ctypeslib.as_array(llama._ctx.get_logits(), shape=(llama.n_vocab(),)).astype(np.float64)
            top = np.argsort(logits)[-40:][::-1]
            shifted = logits - logits.max()
            log_norm = np.log(np.exp(shifted).sum())
            candidates = [
                (llama.detokenize([int(i)]).decode("utf-8", errors="ignore"), float(shifted[i] - log_norm)) for i in top
            ]
            seconds = time.perf_counter() - started
        self.evaluated_tokens += evaluated
        reply = RawReply(text="", prompt_tokens=len(tokens), completion_tokens=0, seconds=seconds, state=state)
        return match_label_logprobs(labels, candidates), reply

    def _chat_prompt(self, llama: Any, messages: list[Message]) -> str:
        """Render messages with the GGUF's own chat template, ending where the assistant's reply starts."""
        if self._formatter is None:
            from llama_cpp.llama_chat_format import Jinja2ChatFormatter

            template = llama.metadata.get("tokenizer.chat_template")
            if not template:
                raise ConfigurationError(f"{self.model_path.name} has no chat template in its metadata")
            eos, bos = llama.token_eos(), llama.token_bos()
            self._formatter = Jinja2ChatFormatter(
                template=template,
                eos_token=llama._model.token_get_text(eos) if eos != -1 else "",
                bos_token=llama._model.token_get_text(bos) if bos != -1 else "",
            )
        return self._formatter(messages=self._prompt_messages(messages)).prompt

    def _prompt_messages(self, messages: list[Message]) -> list[dict[str, Any]]:
        """The messages as the loaded model is sent them: in each, the texts of its special tokens are neutralised
        (`neutralise_special_tokens`), so that no text (an answer, a reference) can end the turn or open another
        when the rendered prompt is tokenized with special tokens parsed. The template adds the prompt's only ones."""
        return [{**m.model_dump(), "content": neutralise_special_tokens(m.content, self._specials)} for m in messages]

    def _eval_reusing_prefix(self, llama: Any, tokens: list[int], hidden_state: bool = False) -> tuple[int, str | None]:
        """Evaluate `tokens`, keeping the KV cache of the prefix shared with the previous request.

        Per-segment calls repeat the same reference, so most of each prompt is already evaluated.
        Returns how many tokens were evaluated anew (what the call really cost) and, with `hidden_state`,
        the final hidden state at the last position (`encode_state`).

        The state: llama.cpp's embeddings of a causal model with no pooling are its output-normed final
        hidden states, the vectors the output layer turns into logits. In embeddings mode llama.cpp makes
        EVERY token of a batch an output (logits for each: ~0.6 MB per token), so the prompt is evaluated
        as usual and only its last token in embeddings mode, alone in its batch: one output row, the same
        forward pass. (llama-cpp-python's `embed()` is not used: it truncates the input to n_batch tokens.)
        """
        previous = llama.input_ids[: llama.n_tokens].tolist() if self.reuse_prefix else []
        shared = 0
        limit = min(len(previous), len(tokens) - 1)  # always evaluate at least one token for fresh logits
        while shared < limit and previous[shared] == tokens[shared]:
            shared += 1
        llama.n_tokens = shared
        if not hidden_state:
            llama.eval(tokens[shared:])
            return len(tokens) - shared, None
        llama_cpp = import_llama()
        import numpy as np

        llama.eval(tokens[shared:-1])
        llama_cpp.llama_set_embeddings(llama._ctx.ctx, True)
        try:
            llama.eval(tokens[-1:])
            pointer = llama_cpp.llama_get_embeddings_ith(llama._ctx.ctx, -1)
            if not pointer:
                raise BackendError("llama.cpp returned no hidden state for the last token", transient=False)
            state = np.ctypeslib.as_array(pointer, shape=(llama.n_embd(),)).copy()
        finally:
            llama_cpp.llama_set_embeddings(llama._ctx.ctx, False)
        return len(tokens) - shared, encode_state(state)

    async def aclose(self) -> None:
        """Free the model, after stopping a call still running in a worker thread (closing under it would crash)."""
        if self._llama is None:
            return
        if self._guard is not None:
            self._guard.cancel.set()
        if not await asyncio.to_thread(self._lock.acquire, True, CLOSE_WAIT_S):
            self._llama = None  # still busy: leave it to the process's exit rather than free it under a thread
            return
        try:
            if self._llama is not None:
                self._llama.close()
                self._llama = None
        finally:
            self._lock.release()


def _download_from_hub(repo_and_file: str) -> Path:
    """Fetch `REPO/FILE.gguf` from the Hugging Face hub (needs internet and huggingface_hub)."""
    repo, _, file_name = repo_and_file.rpartition("/")
    if not repo or not file_name.endswith(".gguf"):
        raise ConfigurationError("hub models are given as local:hf:OWNER/REPO/FILE.gguf")
    try:
        from huggingface_hub import hf_hub_download
    except ImportError as error:
        raise ConfigurationError("hub downloads need huggingface_hub: pip install huggingface_hub") from error
    return Path(hf_hub_download(repo_id=repo, filename=file_name))


__all__ = ["DEFAULT_CONTEXT", "GPU_BUILD_HINT", "LlamaCppModel", "LoadSettings", "gpu_offload_supported"]
