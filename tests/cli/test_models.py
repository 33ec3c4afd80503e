"""`ragfacts models` and the global options."""

from __future__ import annotations

import json

from typer.testing import CliRunner

from ragfacts.cli import app

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
