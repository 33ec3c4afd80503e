"""ragfacts's pytest plugin: the `ragfacts_judge` fixture and the options that configure it.

Registered as the `pytest11` entry point "ragfacts", so it loads in every pytest session where ragfacts is installed:
it imports nothing heavy (no model client) until a test judges an answer.

    pytest --ragfacts-model openai:gpt-4o-mini --ragfacts-base-url http://localhost:8000/v1 --ragfacts-method lface4rag

or, in pytest.ini / pyproject's [tool.pytest.ini_options]: ragfacts_model, ragfacts_base_url, ragfacts_method,
ragfacts_recall_method. The command line wins over the ini file; what neither sets is ragfacts's default (the
RAGFACTS_MODEL / RAGFACTS_BASE_URL / OPENAI_API_KEY environment, lface4rag, faaf). `ragfacts.testing.assert_faithful`
and `assert_recalls` use this judge when given no `judge=`.
"""

from __future__ import annotations

import pytest

from ragfacts.integrations._judge import Judge, default_judge, set_default_judge

_OPTIONS = {
    "model": "the judge's model spec (openai:NAME, local, local:/path.gguf); default: ragfacts's default model",
    "base_url": "an OpenAI-compatible endpoint for openai: models (vLLM, Ollama, ...); default: RAGFACTS_BASE_URL",
    "method": "the precision method spec (lface4rag, lface4rag:strategy=paper, holistic, ...); default: lface4rag",
    "recall_method": "the recall method spec (faaf, prompt-tf, ...); default: faaf",
}
_PREVIOUS = pytest.StashKey[Judge]()


def pytest_addoption(parser: pytest.Parser) -> None:
    group = parser.getgroup("ragfacts", "ragfacts: faithfulness and recall assertions (ragfacts.testing)")
    for name, help_text in _OPTIONS.items():
        group.addoption(f"--ragfacts-{name.replace('_', '-')}", dest=f"ragfacts_{name}", default=None, help=help_text)
        parser.addini(f"ragfacts_{name}", help_text, default="")


def judge_from_config(config: pytest.Config) -> Judge:
    """The judge this session's command line and ini file describe, on ragfacts's defaults."""
    chosen = {name: config.getoption(f"ragfacts_{name}") or config.getini(f"ragfacts_{name}") for name in _OPTIONS}
    return Judge().with_options(**{name: value for name, value in chosen.items() if value})


def pytest_configure(config: pytest.Config) -> None:
    config.stash[_PREVIOUS] = default_judge()  # a pytest run inside a test (pytester) restores the outer judge
    set_default_judge(judge_from_config(config))


def pytest_unconfigure(config: pytest.Config) -> None:
    set_default_judge(config.stash.get(_PREVIOUS, None))


@pytest.fixture(scope="session")
def ragfacts_judge(pytestconfig: pytest.Config) -> Judge:
    """The judge (model, methods, settings) configured by --ragfacts-* options or ragfacts_* ini keys."""
    return judge_from_config(pytestconfig)
