"""`ragfacts models`: which model backends are configured and installed."""

from __future__ import annotations

import importlib.metadata
import importlib.util
import os

import typer
from pydantic import ValidationError
from rich.markup import escape
from rich.table import Table

from ragfacts.cli._app import app
from ragfacts.cli._common import AppState
from ragfacts.console import err, print_json
from ragfacts.models import ConfigurationError, api_key_from_env
from ragfacts.paths import ragfacts_home
from ragfacts.runtime import Settings, default_model_spec


@app.command()
def models(ctx: typer.Context) -> None:
    """Show which model backends are configured and installed."""
    state: AppState = ctx.obj
    rows = backend_status(state.settings)
    if state.as_json:
        print_json(rows)
        return
    table = Table(title="Model backends", title_justify="left")
    for column in ("backend", "spec", "available", "details"):
        table.add_column(column)
    for row in rows:
        table.add_row(
            str(row["backend"]),
            escape(str(row["spec"])),
            "yes" if row["available"] else "no",
            escape(str(row["details"])),
        )
    err.print(table)
    try:
        err.print(f"Default when --model is not given: [bold]{default_model_spec()}[/bold]")
    except ConfigurationError as error:
        err.print(f"[yellow]{escape(str(error))}[/yellow]")


def backend_status(settings: Settings) -> list[dict[str, object]]:
    """Describe each backend: whether it can be used now, and how to make it usable."""
    key_set = api_key_from_env() is not None
    base_url = settings.base_url or os.environ.get("RAGFACTS_BASE_URL")
    api_details = ("API key set" if key_set else "no API key (OPENAI_API_KEY / RAGFACTS_API_KEY)") + (
        f"; base URL {base_url}" if base_url else "; base URL: api.openai.com"
    )
    rows: list[dict[str, object]] = [
        {
            "backend": "openai",
            "spec": "openai:MODEL",
            "available": key_set or bool(base_url),
            "details": api_details,
        }
    ]
    from ragfacts.models.local.embedded import embedded_status

    default_line = embedded_status(ragfacts_home() / "models")
    if importlib.util.find_spec("llama_cpp") is None:
        rows.append(
            {
                "backend": "local",
                "spec": "local[:/path/model.gguf]",
                "available": False,
                "details": "llama-cpp-python not installed: pip install 'ragfacts[local]'",
            }
        )
    else:
        version = importlib.metadata.version("llama-cpp-python")
        loading = local_loading(settings)
        rows.append(
            {
                "backend": "local",
                "spec": "local:/path/model.gguf",
                "available": True,
                "details": f"llama-cpp-python {version}; any GGUF file; {loading['details']}",
                **{k: v for k, v in loading.items() if k != "details"},
            }
        )
        rows.append(
            {
                "backend": "local",
                "spec": "local",
                "available": default_line.startswith("default model"),
                "details": default_line,
            }
        )
    return rows


def local_loading(settings: Settings) -> dict[str, object]:
    """Whether llama.cpp can offload to a GPU, and the context, threads and GPU layers a local model would use."""
    from ragfacts.models.local.llamacpp import GPU_BUILD_HINT, LoadSettings, gpu_offload_supported
    from ragfacts.models.options import LocalModelOptions

    gpu = gpu_offload_supported()
    try:
        local = LoadSettings.resolve(LocalModelOptions.model_validate(settings.options))
    except (ConfigurationError, ValidationError) as error:
        return {"gpu_offload": gpu, "details": f"GPU offload {'available' if gpu else 'not built'}; {error}"}
    layers = "all" if local.n_gpu_layers == -1 else str(local.n_gpu_layers)
    if gpu:
        offload = f"GPU offload available, using {layers} layers (-M n_gpu_layers=N)"
    elif local.n_gpu_layers:
        offload = f"n_gpu_layers={local.n_gpu_layers} is refused: this build has no GPU support; {GPU_BUILD_HINT}"
    else:
        offload = "CPU only (this build has no GPU support; see docs/guides/models.md for a CUDA or Metal build)"
    return {
        "gpu_offload": gpu,
        "n_gpu_layers": local.n_gpu_layers,
        "n_ctx": local.n_ctx,
        "n_threads": local.n_threads,
        "details": f"{offload}; n_ctx={local.n_ctx}, n_threads={local.n_threads}",
    }
