"""`ragfacts models` and the global options."""

from __future__ import annotations

import importlib.util
import json
from collections.abc import Iterator

import pytest
from typer.testing import CliRunner

from ragfacts.cli import app
from tests.conftest import TEST_KEY
from tests.methods.test_lface4rag import REFERENCE, SEG1, decomposition
from tests.scripted_server import ScriptedServer

runner = CliRunner()


def test_help_lists_the_global_options():
    result = runner.invoke(app, ["--help"])
    assert result.exit_code == 0
    for option in ("--model", "--base-url", "--concurrency", "--cache-dir", "--no-cache", "--json"):
        assert option in result.output


def test_models_reports_the_api_as_unconfigured_without_a_key():
    result = runner.invoke(app, ["--json", "models"])
    assert result.exit_code == 0
    rows = {row["backend"]: row for row in json.loads(result.stdout)}
    assert rows["openai"]["available"] is False
    assert "OPENAI_API_KEY" in rows["openai"]["details"]


def test_models_sees_a_key_and_never_prints_it(monkeypatch):
    monkeypatch.setenv("OPENAI_API_KEY", "sk-visible-nowhere")
    result = runner.invoke(app, ["--json", "models"])
    rows = {row["backend"]: row for row in json.loads(result.stdout)}
    assert rows["openai"]["available"] is True
    assert "sk-visible-nowhere" not in result.output


def test_models_shows_a_configured_base_url(monkeypatch):
    result = runner.invoke(app, ["--json", "--base-url", "http://127.0.0.1:9/v1", "models"])
    rows = {row["backend"]: row for row in json.loads(result.stdout)}
    assert rows["openai"]["available"] is True and "127.0.0.1:9" in rows["openai"]["details"]


def test_models_shows_whether_llama_cpp_can_offload_to_a_gpu_and_what_a_local_model_would_use():
    if importlib.util.find_spec("llama_cpp") is None:
        pytest.skip("needs llama-cpp-python")
    from ragfacts.models.local.llamacpp import gpu_offload_supported

    result = runner.invoke(app, ["--json", "-M", "n_ctx=4096", "-M", "n_threads=3", "models"])
    assert result.exit_code == 0, result.output
    local = next(row for row in json.loads(result.stdout) if row["spec"] == "local:/path/model.gguf")
    gpu = gpu_offload_supported()
    assert local["gpu_offload"] is gpu and local["n_gpu_layers"] == (-1 if gpu else 0)
    assert (local["n_ctx"], local["n_threads"]) == (4096, 3)
    human = runner.invoke(app, ["models"])
    assert ("GPU offload available" if gpu else "CPU only") in human.stderr


@pytest.fixture
def own_server(monkeypatch: pytest.MonkeyPatch) -> Iterator[ScriptedServer]:
    """A server of its own: its endpoint's rate limits are this test's alone."""
    monkeypatch.setenv("OPENAI_API_KEY", TEST_KEY)
    server = ScriptedServer().start()
    yield server
    server.stop()


def test_a_request_rate_limit_shows_the_wait_under_the_ledger(own_server):
    own_server.enqueue(decomposition(SEG1))
    args = ["--model", "openai:scripted", "--base-url", own_server.base_url, "-M", "rpm=60"]
    result = runner.invoke(app, [*args, "check", "--reference", REFERENCE, "--answer", SEG1])
    assert result.exit_code == 0, result.output
    assert len(own_server.requests) == 3  # one a second: the second and third waited
    assert "Requests waited" in result.stderr and "rate limits" in result.stderr


def test_without_waiting_the_ledger_has_no_wait_line(own_server):
    args = ["--model", "openai:scripted", "--base-url", own_server.base_url]
    result = runner.invoke(
        app, [*args, "check", "--reference", "Paris is in France.", "--answer", "Paris is in France."]
    )
    assert result.exit_code == 0, result.output
    assert "Usage ledger" in result.stderr and "Requests waited" not in result.stderr


@pytest.mark.parametrize(
    ("option", "message"),
    [
        ("n_gpu_layers=20", "n_gpu_layers is for in-process GGUF models (--model local)"),
        ("rpm=0", "rpm: Input should be greater than 0"),
        ("tpm=lots", "tpm: Input should be a valid number"),
        ("n_ctx=big", "n_ctx: Input should be a valid integer"),
    ],
)
def test_a_model_option_the_model_cannot_take_exits_2_before_any_request(own_server, option, message):
    args = ["--model", "openai:scripted", "--base-url", own_server.base_url, "-M", option]
    result = runner.invoke(app, [*args, "check", "--reference", "Paris is in France.", "--answer", "Paris."])
    assert result.exit_code == 2, result.output
    assert message in result.stderr and "Traceback" not in result.output
    assert own_server.requests == []
