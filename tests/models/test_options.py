"""Model options: one declaration per backend; an option a backend does not take is refused, not ignored."""

from __future__ import annotations

import pytest
from pydantic import ValidationError

from ragfacts.models import ConfigurationError, ModelOptions
from ragfacts.models.http.openai_compat import OpenAICompatibleModel
from ragfacts.models.options import LocalModelOptions, model_options, options_as


def test_plain_values_become_shared_options_unless_they_name_a_local_one():
    assert type(model_options({"rpm": "60", "tpm": "200000"})) is ModelOptions
    local = model_options({"n_gpu_layers": "20", "n_ctx": "8192", "n_threads": "8"})
    assert type(local) is LocalModelOptions
    assert (local.n_gpu_layers, local.n_ctx, local.n_threads) == (20, 8192, 8)


@pytest.mark.parametrize(
    "values",
    [{"rpm": "0"}, {"tpm": "-5"}, {"n_gpu_layers": "-2"}, {"n_threads": "0"}, {"n_ctx": "many"}, {"rpn": "60"}],
)
def test_bad_values_and_misspelled_options_are_refused(values):
    with pytest.raises(ValidationError):
        model_options(values)


def test_local_options_are_refused_by_a_backend_that_does_not_take_them():
    with pytest.raises(ConfigurationError, match=r"n_gpu_layers, n_threads is for in-process GGUF models"):
        options_as(ModelOptions, LocalModelOptions(n_gpu_layers=20, n_threads=4), "openai")


def test_local_options_left_unset_pass_to_any_backend():
    options = options_as(ModelOptions, LocalModelOptions(rpm=60, max_tokens=32), "openai")
    assert type(options) is ModelOptions and (options.rpm, options.max_tokens) == (60, 32)


def test_the_openai_backend_refuses_gpu_layers_when_built():
    with pytest.raises(ConfigurationError, match="the openai backend does not take it"):
        OpenAICompatibleModel("gpt-4o-mini", LocalModelOptions(n_gpu_layers=20), base_url="http://127.0.0.1:9/v1")
