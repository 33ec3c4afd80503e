"""A run's shared pieces: the chosen model, its cache and its ledger, built from user settings."""

from __future__ import annotations

import asyncio
import importlib.util
import os
from collections.abc import Callable, Coroutine
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path
from typing import Any, TypeVar

from pydantic import BaseModel, ConfigDict, Field, ValidationError

from ragfacts.models import (
    ChatModel,
    ConfigurationError,
    ResponseCache,
    UsageLedger,
    api_key_from_env,
    build_model,
    parse_spec,
)
from ragfacts.models.options import LocalModelOptions, ModelOptions, model_options
from ragfacts.paths import ragfacts_home

DEFAULT_API_MODEL = "gpt-4o-mini"
T = TypeVar("T")


class Settings(BaseModel):
    """The model a run uses and how it is called, declared once: the global options of `ragfacts` (`--model`,
    `--base-url`, `--concurrency`, `--cache-dir`, `--no-cache`, `-M`), the Python API's `model=` and `settings` and
    the service's shared model are these fields."""

    model_config = ConfigDict(extra="forbid")

    model: str | None = Field(
        None, description="openai:MODEL | local | local:/path/model.gguf (default: a configured API, else local)"
    )
    base_url: str | None = Field(None, description="OpenAI-compatible endpoint (vLLM, Ollama, ...)")
    concurrency: int = Field(
        ModelOptions.model_fields["concurrency"].default, ge=1, description="model requests in flight at once"
    )
    cache_dir: Path | None = Field(None, description="where the response cache lives")
    use_cache: bool = Field(True, description="use the response cache (off: --no-cache)")
    options: dict[str, object] = Field(
        default_factory=dict, description="model options (`ModelOptions`: max_retries, timeout_s, mode, ...)"
    )


def parse_model_options(pairs: list[str]) -> dict[str, object]:
    """Model options given as ["key=value", ...], with their values checked; raises ValueError naming the fix.

    Whether the chosen backend takes them (n_threads is for local models only) is checked when the model is built.
    """
    options: dict[str, object] = {}
    for pair in pairs:
        key, sep, value = pair.partition("=")
        if not sep or not key.strip():
            raise ValueError(f"a model option is written key=value, not {pair!r}")
        options[key.strip().replace("-", "_")] = value.strip()
    try:
        checked = model_options(options)
    except ValidationError as error:
        raise ValueError(_options_problems(error)) from error
    return checked.model_dump(include=set(options))


def _options_problems(error: ValidationError) -> str:
    problems = "; ".join(f"{'.'.join(map(str, e['loc']))}: {e['msg']}" for e in error.errors())
    return f"model options: {problems}; options: {', '.join(LocalModelOptions.model_fields)}"


def default_model_spec() -> str:
    """Pick a model when none is given: a configured API, else the local default, else explain."""
    if os.environ.get("RAGFACTS_MODEL"):
        return os.environ["RAGFACTS_MODEL"]
    if api_key_from_env() or os.environ.get("RAGFACTS_BASE_URL"):
        return f"openai:{DEFAULT_API_MODEL}"
    if importlib.util.find_spec("llama_cpp") is not None:
        return "local"
    raise ConfigurationError(
        "no model available. Either set OPENAI_API_KEY (or RAGFACTS_API_KEY; add --base-url or "
        "RAGFACTS_BASE_URL for vLLM, Ollama, DeepSeek, DashScope...) and optionally --model openai:NAME, "
        "or install the offline default with: pip install 'ragfacts[local]'"
    )


class Runtime:
    """Owns the model, cache and ledger of one run; close it when done."""

    def __init__(self, settings: Settings) -> None:
        self.settings = settings
        self.ledger = UsageLedger()
        self.cache: ResponseCache | None = None
        if settings.use_cache:
            directory = settings.cache_dir or ragfacts_home()
            self.cache = ResponseCache(Path(directory) / "cache.sqlite3")
        self.spec = parse_spec(settings.model or default_model_spec(), settings.base_url)
        self._model: ChatModel | None = None
        self._second: ChatModel | None = None

    def model(self) -> ChatModel:
        """The run's model, built on first use."""
        if self._model is None:
            try:
                options = model_options({"concurrency": self.settings.concurrency, **self.settings.options})
            except ValidationError as error:
                raise ConfigurationError(_options_problems(error)) from error
            self._model = build_model(self.spec, options, cache=self.cache, ledger=self.ledger)
        return self._model

    def second_model(self, spec: str) -> ChatModel:
        """A second model for the run (a cascade's): its own options' defaults, the run's cache, and the run's
        ledger with its stages named after it, so that the ledger says what each model cost."""
        if self._second is None:
            parsed = parse_spec(spec, self.settings.base_url)  # an openai: model at the run's --base-url
            options = model_options({"concurrency": self.settings.concurrency})
            ledger = self.ledger.for_second_model(parsed.name or parsed.backend)
            self._second = build_model(parsed, options, cache=self.cache, ledger=ledger)
        return self._second

    async def aclose(self) -> None:
        if self._second is not None:
            await self._second.aclose()
        if self._model is not None:
            await self._model.aclose()
        if self.cache is not None:
            self.cache.close()


def run_sync(job: Callable[[], Coroutine[Any, Any, T]]) -> T:
    """Run a coroutine to completion from synchronous code, also inside a running event loop (Jupyter).

    Inside a running loop the coroutine runs on a fresh loop in a worker thread while this thread waits:
    `asyncio.run` cannot be called from a running loop, and nesting loops is not safe.
    """
    try:
        asyncio.get_running_loop()
    except RuntimeError:
        return asyncio.run(job())
    with ThreadPoolExecutor(max_workers=1, thread_name_prefix="ragfacts") as pool:
        return pool.submit(lambda: asyncio.run(job())).result()
