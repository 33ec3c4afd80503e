"""Backends in a registry: a new backend is one class with `@backend`, reached by its specs like the built-in ones."""

from __future__ import annotations

from collections.abc import Iterator
from typing import Any

import pytest

from ragfacts.models import (
    ChatModel,
    ConfigurationError,
    ModelSpec,
    RawReply,
    Request,
    build_model,
    parse_spec,
    registry,
)
from ragfacts.models.registry import backend, registered_backends
from ragfacts.models.spec import check_credentials


@pytest.fixture
def echo_backend() -> Iterator[type[ChatModel]]:
    with registry.BACKENDS.restored():
        yield _echo_backend()


def _echo_backend() -> type[ChatModel]:
    @backend("echo")
    class EchoModel(ChatModel):
        spec_forms = "echo:ANYTHING"

        @classmethod
        def check_credentials(cls, spec: ModelSpec) -> None:
            if spec.name == "locked":
                raise ConfigurationError("echo:locked needs a key")

        @classmethod
        def build(cls, spec: ModelSpec, options: Any, **shared: Any) -> ChatModel:
            return cls(spec.name or "", options, **shared)

        async def _send(self, request: Request) -> RawReply:
            return RawReply(text=request.messages[-1].content)

    return EchoModel


def test_the_built_in_backends_are_registered():
    assert {"openai", "local"} <= set(registered_backends())


def test_a_registered_backend_is_parsed_checked_and_built_from_its_spec(echo_backend):
    spec = parse_spec("echo:hello")
    assert spec == ModelSpec("echo", "hello") and str(spec) == "echo:hello"
    model = build_model(spec)
    assert isinstance(model, echo_backend) and model.backend == "echo" and model.model_id == "hello"
    with pytest.raises(ConfigurationError, match="echo:locked needs a key"):
        check_credentials(parse_spec("echo:locked"))


def test_an_unknown_spec_lists_every_backends_forms(echo_backend):
    with pytest.raises(ConfigurationError) as error:
        parse_spec("nope:x")
    message = str(error.value)
    assert "openai:MODEL" in message and "local:/path/to/model.gguf" in message and "echo:ANYTHING" in message


def test_a_name_taken_by_another_backend_is_refused(echo_backend):
    with pytest.raises(ConfigurationError, match="two backends are registered as 'echo'"):

        @backend("echo")
        class Other(ChatModel):
            async def _send(self, request: Request) -> RawReply:
                raise NotImplementedError


def test_an_unknown_backend_lists_every_backends_forms():
    with pytest.raises(ConfigurationError, match=r"unknown model backend 'nope': use openai:MODEL.* or "):
        registry.backend_class("nope")
