"""Scoring verdict labels by first-token log-probability (for thresholding small models)."""

from __future__ import annotations

import math

import pytest

from ragfacts.models import FailureKind, LabelScores, Message, UsageLedger
from ragfacts.models.labels import match_label_logprobs
from tests.scripted_server import Reply

ASK = [Message(role="user", content="Is the statement supported? Reply Yes or No.")]


def test_candidates_match_labels_by_prefix_and_keep_the_best():
    found = match_label_logprobs(["Yes", "No"], [(" Yes", -0.5), ("Y", -3.0), ("no", -1.0), ("No", -2.0), (" ", -0.1)])
    assert found == {"Yes": -0.5, "No": -2.0}


def test_scores_are_renormalised_over_the_labels():
    scores = LabelScores.from_logprobs({"Yes": math.log(0.6), "No": math.log(0.2), "Maybe": None})
    assert scores.probabilities["Yes"] == pytest.approx(0.75)
    assert scores.probabilities["Maybe"] == 0.0 and scores.best == "Yes"


async def test_openai_backend_asks_for_one_token_with_top_logprobs(make_model, scripted_server):
    scripted_server.enqueue(Reply.first_token_logprobs({"Yes": math.log(0.3), "No": math.log(0.6), "The": -3.0}))
    completion = await make_model().score_labels(ASK, ["Yes", "No"], stage="verdict")
    body = scripted_server.requests[0].body
    assert body["max_tokens"] == 1 and body["logprobs"] is True and body["top_logprobs"] == 20
    assert completion.ok and completion.parsed.probabilities["No"] == pytest.approx(2 / 3)


async def test_label_scores_are_cached(make_model, scripted_server):
    scripted_server.enqueue(Reply.first_token_logprobs({"Yes": -0.1, "No": -2.0}))
    first = await make_model(cache=True).score_labels(ASK, ["Yes", "No"])
    ledger = UsageLedger()
    again = await make_model(cache=True, ledger=ledger).score_labels(ASK, ["Yes", "No"])
    assert again.cached and again.parsed == first.parsed
    assert len(scripted_server.requests) == 1 and ledger.total().cache_hits == 1


async def test_no_label_among_candidates_is_an_explicit_failure(make_model, scripted_server):
    scripted_server.enqueue(Reply.first_token_logprobs({"Perhaps": -0.1}))
    ledger = UsageLedger()
    completion = await make_model(ledger=ledger).score_labels(ASK, ["Yes", "No"])
    assert completion.failure.kind is FailureKind.BACKEND
    assert ledger.total().failures == 1


async def test_server_without_logprobs_is_an_explicit_failure(make_model, scripted_server):
    scripted_server.enqueue(Reply.text("Yes"))
    completion = await make_model().score_labels(ASK, ["Yes", "No"])
    assert completion.failure.kind is FailureKind.REQUEST and "log-probabilities" in completion.failure.message
    # the server answered, so the tokens it counted are counted too
    assert (completion.usage.calls, completion.usage.prompt_tokens, completion.usage.completion_tokens) == (1, 11, 7)


async def test_label_scoring_retries_transient_errors(make_model, scripted_server):
    scripted_server.enqueue(Reply.error(503), Reply.first_token_logprobs({"Yes": -0.1, "No": -2.0}))
    completion = await make_model().score_labels(ASK, ["Yes", "No"])
    assert completion.ok and completion.retries == 1 and completion.usage.calls == 2
