"""Model specs and where keys come from."""

from __future__ import annotations

import pytest

from ragfacts.models import ConfigurationError, ModelOptions, api_key_from_env, build_model, parse_spec


def test_openai_spec_takes_base_url_from_argument_or_environment(monkeypatch):
    assert parse_spec("openai:gpt-4o-mini").base_url is None
    assert parse_spec("openai:qwen", "http://h/v1").base_url == "http://h/v1"
    monkeypatch.setenv("RAGFACTS_BASE_URL", "http://env/v1")
    assert parse_spec("openai:qwen").base_url == "http://env/v1"


def test_local_specs():
    assert parse_spec("local").name is None
    assert parse_spec("local:/models/qwen.gguf").name == "/models/qwen.gguf"


@pytest.mark.parametrize("bad", ["openai:", "gpt-4", "anthropic:claude"])
def test_bad_specs_name_the_accepted_forms(bad):
    with pytest.raises(ConfigurationError):
        parse_spec(bad)


def test_key_comes_from_environment_only(monkeypatch):
    assert api_key_from_env() is None
    monkeypatch.setenv("OPENAI_API_KEY", "a")
    assert api_key_from_env() == "a"
    monkeypatch.setenv("RAGFACTS_API_KEY", "b")
    assert api_key_from_env() == "b"


def test_openai_without_key_or_base_url_says_how_to_fix():
    with pytest.raises(ConfigurationError, match="OPENAI_API_KEY"):
        build_model(parse_spec("openai:gpt-4o-mini"))


def test_misspelled_option_fails_loudly():
    with pytest.raises(ValueError, match="temprature"):
        ModelOptions(temprature=0.5)
