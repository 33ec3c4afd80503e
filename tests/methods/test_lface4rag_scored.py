"""The scored strategies: P(Yes) of the whole answer (holistic_score, the small models' default) or of each
sentence (sentence_scores) against a threshold, the fact stage only to localise and explain failures."""

from __future__ import annotations

import math

import pytest

from ragfacts.methods.lface4rag import AnswerLabel, CheckOptions, check_answer, default_strategy
from ragfacts.models import ModelProfile
from ragfacts.typology import ErrorType
from tests.methods.test_lface4rag import fact_reply
from tests.scripted_server import Reply

REFERENCE = "The tower was finished in 1889. It was built for the World's Fair. It is 300 metres tall."
ANSWER = "The tower was finished in 1889. It was built for the Olympic Games."
SCORED = CheckOptions(strategy="sentence_scores", threshold=0.75)


def yes(probability: float) -> Reply:
    return Reply.first_token_logprobs({"Yes": math.log(probability), "No": math.log(1 - probability)})


def test_auto_chooses_by_the_model_profile_not_the_backend_name():
    assert default_strategy(ModelProfile(parameters_b=1.5, label_scores=True)) == "holistic_score"
    assert default_strategy(ModelProfile(parameters_b=1.5, label_scores=False)) == "paper"
    assert default_strategy(ModelProfile(parameters_b=70, label_scores=True)) == "paper"
    assert default_strategy(ModelProfile(parameters_b=None, label_scores=True)) == "paper"


async def test_a_small_model_declared_for_an_endpoint_is_probed_once_for_log_probabilities(make_model, scripted_server):
    from ragfacts.methods.base import create_method
    from ragfacts.runs.planning import prepare

    scripted_server.enqueue(yes(0.9))
    model = make_model(size_b=1.5)
    (judge,) = await prepare(model, [create_method("lface4rag")])
    # the threshold is set where the strategy knows whether the model's probability is calibrated (it is not here)
    assert judge.options.strategy == "holistic_score" and judge.options.threshold is None
    assert model.label_scores is True and len(scripted_server.requests) == 1
    await prepare(model, [create_method("lface4rag")])
    assert len(scripted_server.requests) == 1  # asked once


async def test_an_endpoint_without_log_probabilities_is_refused_up_front_for_scored_strategies(
    make_model, scripted_server
):
    from ragfacts.methods.base import create_method
    from ragfacts.models import ConfigurationError
    from ragfacts.runs.planning import prepare

    model = make_model()
    with pytest.raises(ConfigurationError, match=r"returns no log-probabilities.*sentence_scores"):
        await prepare(model, [create_method("lface4rag:strategy=sentence_scores")])
    (judge,) = await prepare(make_model(size_b=1.5), [create_method("lface4rag")])
    assert judge.options.strategy == "paper"  # auto falls back


async def test_one_label_score_per_sentence_and_no_other_call_when_all_pass(make_model, scripted_server):
    scripted_server.enqueue(yes(0.9), yes(0.8))
    result = await check_answer(make_model(concurrency=1), REFERENCE, ANSWER, options=SCORED)
    assert result.label is AnswerLabel.CONSISTENT
    assert [r.body["max_tokens"] for r in scripted_server.requests] == [1, 1]
    assert [s.text for s in result.segments] == [
        "The tower was finished in 1889.",
        "It was built for the Olympic Games.",
    ]
    assert [round(s.score.probability, 2) for s in result.segments] == [0.9, 0.8]
    assert result.segments and all(s.fact is None for s in result.segments)
    assert result.options.strategy == "sentence_scores" and result.usage.calls == 2


async def test_a_sentence_below_the_threshold_fails_and_gets_the_fact_stage(make_model, scripted_server):
    scripted_server.enqueue(yes(0.9), yes(0.4), fact_reply("inconsistent", "KCont."))
    result = await check_answer(make_model(concurrency=1), REFERENCE, ANSWER, options=SCORED)
    assert result.label is AnswerLabel.INCONSISTENT
    failing = result.segments[1]
    assert failing.label is AnswerLabel.INCONSISTENT and failing.score.verdict == "inconsistent"
    assert failing.fact.error_type is ErrorType.CONTRADICTION and result.error_types == [ErrorType.CONTRADICTION]
    assert "0.40 < 0.75" in failing.score.explanation
    assert len(scripted_server.requests) == 3 and scripted_server.requests[2].schema is not None


async def test_the_score_decides_and_a_disagreeing_fact_stage_is_said_plainly(make_model, scripted_server):
    """A generated check that finds nothing never reads as "no error" under a flag: the verdict is the score's."""
    scripted_server.enqueue(yes(0.9), yes(0.4), fact_reply("consistent"))
    result = await check_answer(make_model(concurrency=1), REFERENCE, ANSWER, options=SCORED)
    assert result.label is AnswerLabel.INCONSISTENT
    # typed by the evidence checks (a name the reference states otherwise), not by the generated check
    assert result.segments[1].error_types == [ErrorType.CONTRADICTION]
    assert result.segments[1].note == (
        "flagged by its score; the generated fact check did not confirm it (the verdict is the score's)"
    )
    assert "the reference says World's Fair" in result.segments[1].score.explanation
    assert "no error" not in result.model_dump_json()
    assert result.segments[0].note is None


async def test_preceding_sentences_are_shown_as_context_when_asked(make_model, scripted_server):
    scripted_server.enqueue(yes(0.9), yes(0.9))
    options = CheckOptions(strategy="sentence_scores", context=1)
    await check_answer(make_model(concurrency=1), REFERENCE, ANSWER, options=options)
    first, second = (r.prompt for r in scripted_server.requests)
    assert "<preceding_sentences>" not in first
    assert "<preceding_sentences>\nThe tower was finished in 1889.\n</preceding_sentences>" in second
    assert "<statement>\nIt was built for the Olympic Games.\n</statement>" in second


async def test_holistic_score_is_one_forward_pass_against_the_threshold(make_model, scripted_server):
    scripted_server.enqueue(yes(0.3))
    options = CheckOptions(strategy="holistic_score", threshold=0.4, explain_failures=False)
    result = await check_answer(make_model(), REFERENCE, ANSWER, options=options)
    assert len(scripted_server.requests) == 1 and result.label is AnswerLabel.INCONSISTENT
    assert result.holistic.probability == pytest.approx(0.3) and result.faithfulness == 0.0
    assert result.holistic.explanation == "P(supported) = 0.30 < 0.40 (uncalibrated; the threshold given)"


async def test_a_consistent_holistic_score_costs_one_forward_pass_and_nothing_else(make_model, scripted_server):
    scripted_server.enqueue(yes(0.9))
    result = await check_answer(make_model(), REFERENCE, ANSWER, options=CheckOptions(strategy="holistic_score"))
    assert result.label is AnswerLabel.CONSISTENT and len(scripted_server.requests) == 1 and result.segments == []


async def test_a_holistic_score_failure_is_localised_to_the_least_supported_sentence_and_explained(
    make_model, scripted_server
):
    # The whole answer, then each sentence (0.9 and 0.2), then the fact stage of the weakest one.
    scripted_server.enqueue(yes(0.3), yes(0.9), yes(0.2), fact_reply("inconsistent", "KCont."))
    result = await check_answer(
        make_model(concurrency=1), REFERENCE, ANSWER, options=CheckOptions(strategy="holistic_score")
    )
    assert result.label is AnswerLabel.INCONSISTENT and len(scripted_server.requests) == 4
    first, second = result.segments
    assert first.label is AnswerLabel.CONSISTENT and first.fact is None
    assert second.label is AnswerLabel.INCONSISTENT and second.fact.error_type is ErrorType.CONTRADICTION
    assert "Olympic" in scripted_server.requests[3].prompt and result.faithfulness == 0.5
    assert result.reason == (
        "judged inconsistent as a whole (P(supported) = 0.30 < 0.58 (uncalibrated; the threshold for English, "
        "chosen on dev)); sentence 2: “It was built for the Olympic Games.” — the answer says Olympic Games; the "
        "reference says World's Fair (P(supported) = 0.20 < 0.47)"
    )


async def test_a_localised_sentence_the_fact_check_clears_still_carries_the_verdict_and_says_so(
    make_model, scripted_server
):
    scripted_server.enqueue(yes(0.3), fact_reply("consistent"))
    one_sentence = "It was built for the Olympic Games."
    result = await check_answer(make_model(), REFERENCE, one_sentence, options=CheckOptions(strategy="holistic_score"))
    (segment,) = result.segments
    assert result.label is AnswerLabel.INCONSISTENT and segment.label is AnswerLabel.INCONSISTENT
    assert (
        segment.note == "flagged by its score; the generated fact check did not confirm it (the verdict is the score's)"
    )
    assert len(scripted_server.requests) == 2 and result.faithfulness == 0.0


@pytest.mark.parametrize(("threshold", "label"), [(0.85, AnswerLabel.INCONSISTENT), (0.75, AnswerLabel.CONSISTENT)])
async def test_threshold_is_an_option(make_model, scripted_server, threshold, label):
    scripted_server.enqueue(yes(0.9), yes(0.8), fact_reply("inconsistent", "Hallu."))
    options = CheckOptions(strategy="sentence_scores", threshold=threshold)
    result = await check_answer(make_model(concurrency=1), REFERENCE, ANSWER, options=options)
    assert result.label is label


async def test_explanations_can_be_switched_off(make_model, scripted_server):
    scripted_server.enqueue(yes(0.1), yes(0.1))
    options = CheckOptions(strategy="sentence_scores", explain_failures=False)
    result = await check_answer(make_model(concurrency=1), REFERENCE, ANSWER, options=options)
    assert result.label is AnswerLabel.INCONSISTENT and len(scripted_server.requests) == 2


async def test_chinese_sentences_are_scored_with_chinese_labels(make_model, scripted_server):
    p = math.log(0.9), math.log(0.1)
    scripted_server.enqueue(*[Reply.first_token_logprobs({"是": p[0], "否": p[1]})] * 2)
    result = await check_answer(
        make_model(concurrency=1),
        "长城始建于春秋战国时期。今天看到的多为明长城。",
        "长城始建于春秋战国时期。今天看到的多为明长城。",
        options=SCORED,
    )
    assert result.lang == "zh" and result.label is AnswerLabel.CONSISTENT
    assert "只回答一个字" in scripted_server.requests[0].prompt


async def test_a_failed_score_leaves_the_answer_unscored(make_model, scripted_server):
    scripted_server.enqueue(yes(0.9), Reply.error(400))
    result = await check_answer(make_model(concurrency=1), REFERENCE, ANSWER, options=SCORED)
    assert result.label is AnswerLabel.UNSCORED and result.failure_count == 1
