"""Recall by scoring: a head asked whether the answer states each fact, in forward passes that share the answer's
prefix; a fact whose number or name the answer lacks is absent whatever its probability. FaaF uses it where a head
ships for the model (`verify=auto`), and refuses `verify=head` on a model without one."""

from __future__ import annotations

import json

import numpy as np
import pytest
from typer.testing import CliRunner

from ragfacts.cli import app
from ragfacts.evidence import FEATURE_NAMES
from ragfacts.methods.base import create_method
from ragfacts.methods.fact_head import verify_by_head
from ragfacts.methods.precision.head import Head
from ragfacts.models.options import LocalModelOptions
from tests.models.local.test_llamacpp import SMOLLM2, needs_model

ANSWER = "Artemisinin was discovered in 1972 by Tu Youyou's team. It treats malaria."


def _head(model_sha256: str, recall: dict | None = None, weight: float = 1.0) -> Head:
    """A head over the Yes-No log-odds alone (no state weights), with recall thresholds where given."""
    return Head(
        model_sha256=model_sha256,
        model_size=1,
        prompts={},
        state_weights=np.zeros(0),
        baseline_weight=weight,
        evidence_weights=np.zeros(len(FEATURE_NAMES)),
        bias=0.0,
        thresholds={"en": 0.5},
        recall=recall or {},
    )


def test_a_head_keeps_its_recall_thresholds_apart_from_its_precision_digest():
    plain = _head("a" * 64)
    with_recall = _head("a" * 64, {"thresholds": {"en": 0.3}, "chosen_on": "labelled recall pairs"})
    assert with_recall.digest == plain.digest  # no precision verdict changes
    assert with_recall.recall_threshold("en") == 0.3 and plain.recall_threshold("en") == 0.5
    again = Head.from_json(json.loads(json.dumps(with_recall.to_json())))
    assert again.recall == with_recall.recall


def test_recall_reads_its_own_weights_where_the_head_carries_them_and_the_precision_weights_otherwise():
    precision_only = _head("a" * 64, weight=1.0)
    own = {"state_f32_base64": "", "baseline": -2.0, "evidence": [0.0] * len(FEATURE_NAMES), "bias": 0.5}
    with_weights = _head("a" * 64, {"thresholds": {"en": 0.5}, "weights": own}, weight=1.0)
    fact, answer = "Artemisinin treats malaria.", ANSWER
    assert precision_only.recall_probability(np.zeros(0), 1.0, fact, answer, "en") == pytest.approx(
        precision_only.probability(np.zeros(0), 1.0, fact, answer, "en")
    )
    assert with_weights.recall_probability(np.zeros(0), 1.0, fact, answer, "en") == pytest.approx(
        1 / (1 + np.exp(-(-2.0 * 1.0 + 0.5)))
    )
    assert with_weights.digest == precision_only.digest  # recall weights change no precision verdict
    again = Head.from_json(json.loads(json.dumps(with_weights.to_json())))
    assert again.recall_probability(np.zeros(0), 1.0, fact, answer, "en") == pytest.approx(
        with_weights.recall_probability(np.zeros(0), 1.0, fact, answer, "en")
    )


@needs_model
async def test_facts_are_scored_one_pass_each_sharing_the_answers_prefix_and_nothing_is_generated():
    from ragfacts.models.local.llamacpp import LlamaCppModel

    model = LlamaCppModel(SMOLLM2, LocalModelOptions(n_ctx=1024))
    try:
        head = _head(model.weights_sha256(), {"thresholds": {"en": 0.0}})  # every fact passes on its score
        facts = ["Artemisinin treats malaria.", "Artemisinin was discovered in 1969.", "Tu Youyou led the team."]
        result = await verify_by_head(model, head, facts, ANSWER, "en", "faaf")
        evaluated = model.evaluated_tokens
    finally:
        await model.aclose()
    assert [v.verdict for v in result.verdicts] == [True, False, True]  # 1969: a number the answer does not state
    assert "the answer does not state 1969" in result.verdicts[1].raw
    assert result.verdicts and all(v.probability is not None for v in result.verdicts)
    usage = result.usage
    assert usage.completion_tokens == 0 and usage.calls == 3
    assert evaluated < usage.prompt_tokens * 0.7  # the answer's prefix was evaluated once, not three times


def test_verify_head_on_a_model_no_head_ships_for_is_refused_with_a_message(scripted_server, monkeypatch):
    from tests.conftest import TEST_KEY

    monkeypatch.setenv("OPENAI_API_KEY", TEST_KEY)
    refused = CliRunner().invoke(
        app,
        [
            *("--model", "openai:scripted", "--base-url", scripted_server.base_url, "--no-cache", "recall"),
            *("-a", ANSWER, "-f", '["Artemisinin treats malaria."]', "-O", "verify=head"),
        ],
    )
    assert refused.exit_code == 2 and "verify=head needs a model a trained head ships for" in refused.stderr
    assert scripted_server.requests == []


@pytest.mark.parametrize("verify", ["auto", "function"])
def test_on_an_endpoint_faaf_stays_the_papers_structured_call(make_model, verify):
    judge = create_method(f"faaf:verify={verify}")
    assert judge.resolved(make_model()).options.verify == "function"
