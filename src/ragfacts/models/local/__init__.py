"""The `local` backend: GGUF models in this process through llama-cpp-python (`llamacpp`, loaded by `llama_load`),
the embedded default model (`embedded`), GGUF headers read without the weights (`gguf`), and the bounds of one
in-process call (`local_limits`)."""
