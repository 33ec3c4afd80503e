"""How llama.cpp loads a GGUF: the library itself, the context window, threads and GPU layers."""

from __future__ import annotations

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
    try:
        import llama_cpp
    except ImportError as error:
        raise ConfigurationError(
            "the local backend needs llama-cpp-python: pip install 'ragfacts[local]' "
            "(it compiles from source where no wheel exists, ~7 min on 2 cores)"
        ) from error
    return llama_cpp


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
