"""How llama.cpp loads a GGUF: the library itself (its log routed), the context window, threads and GPU layers, and
what the loaded model's tokenizer reads as special tokens."""

from __future__ import annotations

import ctypes
import os
from dataclasses import dataclass
from typing import Any

from ragfacts.models._errors import ConfigurationError
from ragfacts.models.options import LocalModelOptions, ModelOptions

DEFAULT_CONTEXT = 8192
GPU_BUILD_HINT = (
    'reinstall llama-cpp-python with GPU support: CMAKE_ARGS="-DGGML_CUDA=on" (NVIDIA) or CMAKE_ARGS="-DGGML_METAL=on" '
    "(Apple) pip install --force-reinstall --no-cache-dir llama-cpp-python"
)


def import_llama() -> Any:
    """llama-cpp-python, its log routed by `route_llama_log` before anything is asked of it."""
    try:
        import llama_cpp
    except ImportError as error:
        raise ConfigurationError(
            "the local backend needs llama-cpp-python: pip install 'ragfacts[local]' "
            "(it compiles from source where no wheel exists, ~7 min on 2 cores)"
        ) from error
    route_llama_log(llama_cpp)
    return llama_cpp


def llama_debug() -> bool:
    """Whether llama.cpp may speak: RAGFACTS_DEBUG is set (then a model also loads with verbose=True)."""
    return bool(os.environ.get("RAGFACTS_DEBUG"))


_log_shown: bool | None = None  # what route_llama_log last set: None before it ran
_drop_log: Any = None  # the callback that drops every line, kept alive: llama.cpp holds only a C pointer to it


def route_llama_log(llama_cpp: Any) -> None:
    """Drop every line of llama.cpp's (and ggml's) log unless RAGFACTS_DEBUG is set; then llama.cpp prints all of it.

    Its C code writes to the process's stderr through one process-wide callback, and llama-cpp-python's prints
    warnings even with verbose=False (e.g. "decode: removing memory module entries ..." after every call stopped
    at its --timeout), so that callback is replaced.
    """
    global _log_shown, _drop_log
    shown = llama_debug()
    if shown == _log_shown:
        return
    if _drop_log is None:
        _drop_log = llama_cpp.llama_log_callback(lambda level, text, user_data: None)
    default = llama_cpp.llama_log_callback()  # a NULL pointer: llama.cpp's own logger, which prints all to stderr
    llama_cpp.llama_log_set(default if shown else _drop_log, ctypes.c_void_p(0))
    _log_shown = shown


def special_token_texts(llama: Any) -> frozenset[str]:
    """The texts a loaded model's tokenizer reads as its special tokens when a prompt is tokenized with special tokens
    parsed, as chat templates need: its control (and unknown) tokens, and its BOS, EOS and end-of-generation tokens
    whatever their kind. Read once a load: ~50 ms for a vocabulary of 50,000 tokens."""
    llama_cpp = import_llama()
    model = llama._model
    # llama.cpp's vocabulary calls take the vocabulary; before llama-cpp-python 0.3.6 they took the model
    vocab = getattr(model, "vocab", model.model)
    is_eog = getattr(llama_cpp, "llama_vocab_is_eog", None) or llama_cpp.llama_token_is_eog
    marks = llama_cpp.LLAMA_TOKEN_ATTR_CONTROL | llama_cpp.LLAMA_TOKEN_ATTR_UNKNOWN
    ends = {llama.token_bos(), llama.token_eos()}
    return frozenset(
        model.token_get_text(token)
        for token in range(llama.n_vocab())
        if model.token_get_attr(token) & marks or is_eog(vocab, token) or token in ends
    )


def gpu_offload_supported() -> bool:
    """Whether the installed llama.cpp was built with GPU support (CUDA, Metal, Vulkan...)."""
    return bool(import_llama().llama_supports_gpu_offload())


@dataclass(frozen=True)
class LoadSettings:
    """How llama.cpp loads a model: the options where given, else the defaults of this machine."""

    n_ctx: int
    n_threads: int
    n_gpu_layers: int  # -1: all layers

    @classmethod
    def resolve(cls, options: LocalModelOptions) -> LoadSettings:
        """The settings `options` ask for, the defaults filled in (asking llama.cpp whether it can offload)."""
        n_gpu_layers = options.n_gpu_layers
        if n_gpu_layers is None:
            n_gpu_layers = -1 if gpu_offload_supported() else 0
        return cls(
            n_ctx=context_size(options), n_threads=options.n_threads or os.cpu_count() or 1, n_gpu_layers=n_gpu_layers
        )


def refuse_offload_without_gpu(options: ModelOptions) -> None:
    """Asking for GPU layers from a CPU-only build is an error: llama.cpp would silently run on the CPU."""
    layers = getattr(options, "n_gpu_layers", None)
    if layers and not gpu_offload_supported():
        raise ConfigurationError(
            f"n_gpu_layers={layers} asks for GPU offload, but this llama-cpp-python was built without GPU "
            f"support: {GPU_BUILD_HINT}; or drop -M n_gpu_layers"
        )


def context_size(options: LocalModelOptions) -> int:
    """The context window: -M n_ctx, else RAGFACTS_LOCAL_N_CTX, else DEFAULT_CONTEXT."""
    if options.n_ctx is not None:
        return options.n_ctx
    variable = os.environ.get("RAGFACTS_LOCAL_N_CTX", str(DEFAULT_CONTEXT))
    try:
        return int(variable)
    except ValueError:
        raise ConfigurationError(
            f"RAGFACTS_LOCAL_N_CTX={variable!r} is not a number of tokens; set a number or pass -M n_ctx=8192"
        ) from None
