"""Why a flagged answer is flagged, by scoring alone (no text generated); generation only where asked, best effort.

A flagged answer's reason names what differs (the evidence checks' mismatches in words, else the clause its closest
reference sentence lacks), the sentence that carries the verdict with its score, and an error type, or "untyped"
said plainly. A generated explanation that fails never changes the verdict nor makes the result incomplete.
"""

from __future__ import annotations

import math

import pytest

from ragfacts.methods.base import create_method
from ragfacts.methods.lface4rag import AnswerLabel, CheckOptions, check_answer
from ragfacts.methods.precision.explain import differing_clause
from ragfacts.models import ModelProfile
from ragfacts.typology import ErrorType
from tests.models.local.test_llamacpp import SMOLLM2, needs_model
from tests.scripted_server import Reply

REFERENCE = "The tower was finished in 1889. It was built for the World's Fair. It is 300 metres tall."
SCORES = CheckOptions(strategy="holistic_score", explain="scores")


def yes(probability: float, labels: tuple[str, str] = ("Yes", "No")) -> Reply:
    return Reply.first_token_logprobs({labels[0]: math.log(probability), labels[1]: math.log(1 - probability)})


async def test_a_wrong_number_is_named_typed_and_located_without_generating(make_model, scripted_server):
    # The whole answer, then each sentence: scoring only, one token each
    scripted_server.enqueue(yes(0.3), yes(0.2), yes(0.9))
    answer = "The tower was finished in 1899. It was built for the World's Fair."
    result = await check_answer(make_model(concurrency=1), REFERENCE, answer, options=SCORES)
    assert result.label is AnswerLabel.INCONSISTENT
    assert [r.body["max_tokens"] for r in scripted_server.requests] == [1, 1, 1]  # nothing generated
    first, second = result.segments
    assert first.label is AnswerLabel.INCONSISTENT and first.error_types == [ErrorType.CONTRADICTION]
    assert second.label is AnswerLabel.CONSISTENT and first.fact is None
    assert "sentence 1: “The tower was finished in 1899.” — the answer says 1899; the reference says 1889" in (
        result.reason
    )
    assert result.view().error_types == ["KCont."] and result.outcome().complete


async def test_a_flag_with_no_number_or_name_amiss_names_the_differing_clause_and_is_untyped(
    make_model, scripted_server
):
    scripted_server.enqueue(yes(0.3), yes(0.9), yes(0.2))
    answer = "The tower was finished in 1889. It was painted blue by volunteers."
    result = await check_answer(make_model(concurrency=1), REFERENCE, answer, options=SCORES)
    assert "its least supported sentence (2 of 2)" in result.reason
    assert "the answer says “painted blue by volunteers”, which its closest reference sentence does not" in (
        result.reason
    )
    assert "error type: untyped" in result.reason
    view = result.view()
    assert view.error_types == ["untyped"] and view.flagged[0].text == "It was painted blue by volunteers."


async def test_a_chinese_name_in_place_of_the_references_is_named_beside_it_in_chinese(make_model, scripted_server):
    pytest.importorskip("jieba")
    scripted_server.enqueue(yes(0.2, ("是", "否")))
    reference = "青蒿素由屠呦呦团队于1972年发现。它是一种抗疟药物。"
    result = await check_answer(make_model(), reference, "青蒿素由袁隆平团队于1972年发现。", options=SCORES)
    (segment,) = result.segments
    assert result.lang == "zh" and segment.label is AnswerLabel.INCONSISTENT
    assert "回答说 袁隆平；参考资料说 屠呦呦" in result.reason and "唯一的句子" in result.reason
    assert segment.error_types == [ErrorType.CONTRADICTION]  # a name in place of the reference's: KCont.


async def test_a_chinese_name_the_reference_does_not_state_at_all_is_a_hallucination(make_model, scripted_server):
    pytest.importorskip("jieba")
    scripted_server.enqueue(yes(0.2, ("是", "否")))
    reference = "青蒿素是一种抗疟药物，于1972年发现。"
    result = await check_answer(make_model(), reference, "青蒿素由袁隆平团队于1972年发现。", options=SCORES)
    assert "回答说 袁隆平；参考资料没有提到它" in result.reason
    assert result.segments[0].error_types == [ErrorType.HALLUCINATION]


async def test_a_failed_generated_explanation_never_changes_the_verdict_nor_completeness(make_model, scripted_server):
    scripted_server.enqueue(yes(0.3), Reply.error(400))
    options = CheckOptions(strategy="holistic_score", explain="generate")
    result = await check_answer(make_model(), REFERENCE, "It was built for the Olympic Games.", options=options)
    assert result.label is AnswerLabel.INCONSISTENT and len(scripted_server.requests) == 2
    outcome = result.outcome()
    assert outcome.complete and outcome.failures == 0 and result.failure_count == 0
    (failure,) = result.failures
    assert failure.optional and "best effort" in result.view().failures[0]


async def test_an_explanation_is_capped_by_its_token_budget(make_model, scripted_server):
    from ragfacts.methods.precision.explain import EXPLAIN_TOKENS

    scripted_server.enqueue(yes(0.3))
    options = CheckOptions(strategy="holistic_score", explain="generate")
    await check_answer(make_model(), REFERENCE, "It was built for the Olympic Games.", options=options)
    assert scripted_server.requests[1].body["max_tokens"] == EXPLAIN_TOKENS


def test_explain_auto_scores_in_process_and_generates_on_an_endpoint():
    local = ModelProfile(parameters_b=1.5, label_scores=True, in_process=True)
    endpoint = ModelProfile(parameters_b=1.5, label_scores=True)
    assert CheckOptions().resolved_for(local).explain == "scores"
    assert CheckOptions().resolved_for(endpoint).explain == "generate"
    assert CheckOptions(explain="none").resolved_for(local).explain == "none"


@pytest.mark.parametrize(
    ("given", "means"), [(False, "none"), (True, "generate"), ("false", "none"), ("true", "generate")]
)
def test_the_earlier_option_explain_failures_still_works(given, means):
    assert CheckOptions(explain_failures=given).explain == means
    assert create_method(f"lface4rag:explain_failures={str(given).lower()}").options.explain == means


def test_a_clause_whose_words_are_all_in_the_reference_says_the_relation_may_differ():
    said = differing_clause("因为明前茶滋味鲜爽，所以春季气温较低", "因为春季气温较低，所以明前茶滋味鲜爽。", "zh")
    assert said.startswith("它的词语都见于最接近的参考句")
    english = differing_clause("For the World's Fair it was built.", REFERENCE, "en")
    assert english.startswith("its words are all in its closest reference sentence")


@needs_model
async def test_the_default_on_a_local_model_explains_a_flag_without_generating_a_token():
    """On a GGUF run in-process (SmolLM2-135M here), the default decides and explains by forward passes only."""
    from ragfacts.models.local.llamacpp import LlamaCppModel
    from ragfacts.models.options import LocalModelOptions

    model = LlamaCppModel(SMOLLM2, LocalModelOptions(n_ctx=1024))
    try:
        await model.probe_label_scores()
        options = CheckOptions(threshold=0.999)  # every answer is flagged by the tiny model's score
        answer = "The tower was finished in 1899. It was built for the World's Fair."
        result = await check_answer(model, REFERENCE, answer, options=options)
    finally:
        await model.aclose()
    assert result.options.strategy == "holistic_score" and result.options.explain == "scores"
    assert result.label is AnswerLabel.INCONSISTENT and result.usage.completion_tokens == 0
    assert result.segments and all(segment.fact is None for segment in result.segments)
    assert "the answer says 1899; the reference says 1889" in result.reason


async def test_a_failed_sentence_score_leaves_the_verdict_made_and_the_result_complete(make_model, scripted_server):
    scripted_server.enqueue(yes(0.3), Reply.error(400), yes(0.9))
    answer = "The tower was painted blue. It was built for the World's Fair."
    result = await check_answer(make_model(concurrency=1), REFERENCE, answer, options=SCORES)
    assert result.label is AnswerLabel.INCONSISTENT and result.outcome().complete
    assert [s.label for s in result.segments] == [AnswerLabel.UNSCORED, AnswerLabel.INCONSISTENT]
