"""batched=true: one fact call and one logic call for all segments (or one call for both, joint_stages=true), each
segment's results as in paper mode."""

from __future__ import annotations

from typing import Any

import pytest

from ragfacts.items import Item
from ragfacts.methods.base import MethodError, create_method
from ragfacts.methods.lface4rag import AnswerLabel, CheckOptions, check_answer
from ragfacts.methods.precision.batched import number_segments
from ragfacts.text import delimit
from tests.methods.test_lface4rag import (
    ANSWER,
    REFERENCE,
    SEG1,
    SEG2,
    ZH_ANSWER,
    ZH_REFERENCE,
    decomposition,
    names,
)
from tests.scripted_server import Reply

BATCHED = CheckOptions(strategy="paper", batched=True)
STRUCTURE = {"links": [], "framework": "f"}


def fact_entry(n: int, verdict: str = "consistent", error_type: str | None = None, quote: str = "") -> dict[str, Any]:
    point = {"point": f"p{n}", "reference_quote": quote, "check": "c", "verdict": verdict}
    return {"segment": n, "points": [point], "error_type": error_type, "verdict": verdict}


def logic_entry(n: int, verdict: str = "consistent", error_type: str | None = None) -> dict[str, Any]:
    return {
        "segment": n,
        "reference_context": "",
        "segment_structure": STRUCTURE,
        "reference_structure": STRUCTURE,
        "comparison": "compared",
        "error_type": error_type,
        "verdict": verdict,
    }


def batch(*entries: dict[str, Any]) -> Reply:
    return Reply.json({"segments": list(entries)})


def script_stages(scripted_server, facts: Reply, logics: Reply) -> None:
    scripted_server.when("Logical structure", logics, times=1)
    scripted_server.when("informational point", facts, times=1)


@pytest.mark.parametrize("count", [2, 4])
async def test_an_answer_costs_three_calls_whatever_its_number_of_segments(make_model, scripted_server, count):
    segments = [f"Segment number {n} of the answer." for n in range(1, count + 1)]
    scripted_server.enqueue(decomposition(*segments))
    script_stages(
        scripted_server,
        batch(*(fact_entry(n) for n in range(1, count + 1))),
        batch(*(logic_entry(n) for n in range(1, count + 1))),
    )
    result = await check_answer(make_model(), REFERENCE, " ".join(segments), options=BATCHED)
    requests = scripted_server.requests
    assert names(requests)[0] == "Decomposition"
    assert sorted(names(requests)[1:]) == ["FactChecks", "LogicChecks"]
    for request in requests[1:]:
        assert number_segments(segments) in request.prompt
        assert request.schema["properties"]["segments"]["minItems"] == count
        assert request.schema["properties"]["segments"]["maxItems"] == count
    assert result.label is AnswerLabel.CONSISTENT and len(result.segments) == count
    assert result.usage.calls == 3 and result.usage.completions == 3
    assert len(result.batches) == 2 and len(result.calls()) == 3


async def test_each_segment_gets_its_own_verdicts_error_types_and_verified_quotes(make_model, scripted_server):
    scripted_server.enqueue(decomposition(SEG1, SEG2))
    script_stages(
        scripted_server,
        batch(fact_entry(1, quote="The Nile flows north through Egypt"), fact_entry(2, quote="not in the text")),
        batch(logic_entry(1), logic_entry(2, "inconsistent", "LCaus.")),
    )
    result = await check_answer(make_model(), REFERENCE, ANSWER, options=BATCHED)
    first, second = result.segments
    assert first.label is AnswerLabel.CONSISTENT and first.fact.points[0].quote.verified
    assert second.label is AnswerLabel.INCONSISTENT and [t.value for t in second.error_types] == ["LCaus."]
    assert not second.fact.points[0].quote.verified and result.unverified_quotes == 1
    assert first.fact.call.batched and first.fact.call.usage.calls == 0  # the cost is on the batch, once
    assert result.label is AnswerLabel.INCONSISTENT and result.faithfulness == 0.5


async def test_a_reply_that_skips_or_reorders_segments_is_asked_again(make_model, scripted_server):
    scripted_server.enqueue(
        decomposition(SEG1, SEG2),
        batch(fact_entry(2), fact_entry(1)),  # out of order: invalid, re-asked
        batch(fact_entry(1), fact_entry(2)),
    )
    result = await check_answer(
        make_model(), REFERENCE, ANSWER, options=BATCHED.model_copy(update={"logic_stage": False})
    )
    assert names(scripted_server.requests) == ["Decomposition", "FactChecks", "FactChecks"]
    assert "numbered 1 to 2 in order" in scripted_server.requests[2].prompt
    assert result.label is AnswerLabel.CONSISTENT and result.usage.reasks == 1


async def test_a_failed_batch_leaves_every_segment_unscored_and_counts_one_failure(make_model, scripted_server):
    scripted_server.enqueue(decomposition(SEG1, SEG2))
    script_stages(scripted_server, Reply.error(400), batch(logic_entry(1), logic_entry(2)))
    result = await check_answer(make_model(max_retries=0), REFERENCE, ANSWER, options=BATCHED)
    assert [s.label for s in result.segments] == [AnswerLabel.UNSCORED] * 2
    assert result.label is AnswerLabel.UNSCORED and result.failure_count == 1
    assert [f.stage for f in result.failures] == ["fact_consistency_batch"]


async def test_an_inconsistent_verdict_in_a_failed_batch_still_decides_the_answer(make_model, scripted_server):
    scripted_server.enqueue(decomposition(SEG1, SEG2))
    script_stages(scripted_server, Reply.error(400), batch(logic_entry(1), logic_entry(2, "inconsistent", "LOver.")))
    result = await check_answer(make_model(max_retries=0), REFERENCE, ANSWER, options=BATCHED)
    assert result.label is AnswerLabel.INCONSISTENT


async def test_ablations_apply_to_batched_calls(make_model, scripted_server):
    scripted_server.enqueue(
        decomposition(SEG1, SEG2),
        batch(
            {"segment": 1, "error_type": None, "verdict": "consistent"},
            {"segment": 2, "error_type": None, "verdict": "consistent"},
        ),
    )
    options = CheckOptions(strategy="paper", batched=True, chain_of_thought=False, logic_stage=False)
    result = await check_answer(make_model(), REFERENCE, ANSWER, options=options)
    assert names(scripted_server.requests) == ["Decomposition", "FactVerdicts"]
    assert result.label is AnswerLabel.CONSISTENT and result.usage.calls == 2


async def test_chinese_answers_get_the_chinese_batch_prompts_and_schema(make_model, scripted_server):
    segments = ["长城始建于春秋战国时期。", "今天看到的长城多为明长城。"]
    scripted_server.enqueue(decomposition(*segments))
    scripted_server.when("逻辑结构", batch(logic_entry(1), logic_entry(2)), times=1)
    scripted_server.when("事实上是否一致", batch(fact_entry(1), fact_entry(2)), times=1)
    result = await check_answer(make_model(), ZH_REFERENCE, ZH_ANSWER, options=BATCHED)
    stage_requests = scripted_server.requests[1:]
    assert stage_requests and all("片段按 [1]、[2] 等编号" in r.prompt for r in stage_requests)
    descriptions = [r.schema["properties"]["segments"]["description"] for r in stage_requests]
    assert descriptions == ["每个片段一个条目，按给定顺序：第 n 个条目只检查片段 [n]。"] * 2
    assert result.label is AnswerLabel.CONSISTENT


async def test_sentence_scores_explains_all_failing_sentences_in_one_call(make_model, scripted_server):
    sentences = ["The Nile flows north.", "Rain never falls in Ethiopia.", "The dam ended nothing."]
    scripted_server.when(
        "<segments>", batch(fact_entry(1, "inconsistent", "KCont."), fact_entry(2, "inconsistent", "KCont."))
    )
    scripted_server.when(delimit("statement", sentences[0]), Reply.first_token_logprobs({"Yes": -0.01, "No": -5.0}))
    for sentence in sentences[1:]:
        scripted_server.when(delimit("statement", sentence), Reply.first_token_logprobs({"Yes": -3.0, "No": -0.05}))
    options = CheckOptions(strategy="sentence_scores", batched=True, threshold=0.5)
    result = await check_answer(make_model(), REFERENCE, " ".join(sentences), options=options)
    batches = [r for r in scripted_server.requests if r.schema is not None]
    assert names(batches) == ["FactChecks"]
    assert number_segments(sentences[1:]) in batches[0].prompt
    assert [s.label for s in result.segments] == [AnswerLabel.CONSISTENT] + [AnswerLabel.INCONSISTENT] * 2
    assert result.segments[0].fact is None and result.segments[2].fact.error_type.value == "KCont."
    assert result.usage.calls == 4 and len(result.batches) == 1


def test_the_dry_run_estimate_of_a_batched_answer_is_three_calls(make_model):
    judge = create_method("lface4rag", strategy="paper", batched=True)
    item = Item(reference=REFERENCE, answer=" ".join(f"Sentence {n} is here." for n in range(6)))
    estimate = judge.estimate(item, make_model())
    paper = create_method("lface4rag", strategy="paper").estimate(item, make_model())
    assert estimate.calls == 3 and paper.calls == 13
    assert estimate.completion_tokens > 0


# joint_stages=true: the fact and the logic stage of every segment in one call, 2 calls an answer.

JOINT = CheckOptions(strategy="paper", batched=True, joint_stages=True)


def joint_entry(n: int, fact: dict[str, Any], logic: dict[str, Any]) -> dict[str, Any]:
    return {"segment": n, "fact": _unnumbered(fact), "logic": _unnumbered(logic)}


def _unnumbered(entry: dict[str, Any]) -> dict[str, Any]:
    return {key: value for key, value in entry.items() if key != "segment"}


@pytest.mark.parametrize("count", [2, 4])
async def test_joint_stages_cost_two_calls_whatever_the_number_of_segments(make_model, scripted_server, count):
    segments = [f"Segment number {n} of the answer." for n in range(1, count + 1)]
    scripted_server.enqueue(
        decomposition(*segments),
        batch(*(joint_entry(n, fact_entry(n), logic_entry(n)) for n in range(1, count + 1))),
    )
    result = await check_answer(make_model(), REFERENCE, " ".join(segments), options=JOINT)
    requests = scripted_server.requests
    assert names(requests) == ["Decomposition", "FactLogicChecks"]
    joint = requests[1]
    assert number_segments(segments) in joint.prompt
    assert "informational point" in joint.prompt and "Logical structure" in joint.prompt
    entries = joint.schema["properties"]["segments"]
    assert entries["minItems"] == count == entries["maxItems"]
    assert list(entries["items"]["properties"]) == ["segment", "fact", "logic"]
    assert result.label is AnswerLabel.CONSISTENT and len(result.segments) == count
    assert result.usage.calls == 2 and len(result.batches) == 1 and len(result.calls()) == 2


async def test_a_joint_entry_gives_its_segment_both_stages_results(make_model, scripted_server):
    scripted_server.enqueue(
        decomposition(SEG1, SEG2),
        batch(
            joint_entry(1, fact_entry(1, quote="The Nile flows north through Egypt"), logic_entry(1)),
            joint_entry(2, fact_entry(2, quote="not in the text"), logic_entry(2, "inconsistent", "LCaus.")),
        ),
    )
    result = await check_answer(make_model(), REFERENCE, ANSWER, options=JOINT)
    first, second = result.segments
    assert first.label is AnswerLabel.CONSISTENT and first.fact.points[0].quote.verified
    assert first.logic is not None and first.logic.verdict == "consistent"
    assert second.label is AnswerLabel.INCONSISTENT and [t.value for t in second.error_types] == ["LCaus."]
    assert not second.fact.points[0].quote.verified and result.unverified_quotes == 1
    assert {first.fact.call.stage, second.logic.call.stage} == {"fact_logic_batch"}
    assert first.fact.call.batched and second.logic.call.usage.calls == 0  # the cost is on the batch, once
    assert result.label is AnswerLabel.INCONSISTENT and result.faithfulness == 0.5


async def test_a_failed_joint_call_leaves_every_segment_unscored_and_counts_one_failure(make_model, scripted_server):
    scripted_server.enqueue(decomposition(SEG1, SEG2), Reply.error(400))
    result = await check_answer(make_model(max_retries=0), REFERENCE, ANSWER, options=JOINT)
    assert [s.label for s in result.segments] == [AnswerLabel.UNSCORED] * 2
    assert result.segments and all(s.fact.verdict is None and s.logic.verdict is None for s in result.segments)
    assert result.label is AnswerLabel.UNSCORED and result.failure_count == 1
    assert [f.stage for f in result.failures] == ["fact_logic_batch"]


async def test_joint_stages_without_chain_of_thought_ask_for_both_verdicts_directly(make_model, scripted_server):
    verdict = {"error_type": None, "verdict": "consistent"}
    scripted_server.enqueue(
        decomposition(SEG1, SEG2),
        batch(*({"segment": n, "fact": verdict, "logic": verdict} for n in (1, 2))),
    )
    options = JOINT.model_copy(update={"chain_of_thought": False})
    result = await check_answer(make_model(), REFERENCE, ANSWER, options=options)
    assert names(scripted_server.requests) == ["Decomposition", "FactLogicVerdicts"]
    assert "without explanation" in scripted_server.requests[1].prompt
    assert result.label is AnswerLabel.CONSISTENT and result.usage.calls == 2


async def test_chinese_answers_get_the_chinese_joint_prompt_and_schema(make_model, scripted_server):
    segments = ["长城始建于春秋战国时期。", "今天看到的长城多为明长城。"]
    scripted_server.enqueue(
        decomposition(*segments), batch(*(joint_entry(n, fact_entry(n), logic_entry(n)) for n in (1, 2)))
    )
    result = await check_answer(make_model(), ZH_REFERENCE, ZH_ANSWER, options=JOINT)
    joint = scripted_server.requests[1]
    assert "先查事实，再查逻辑" in joint.prompt
    entry = joint.schema["properties"]["segments"]["items"]
    assert entry["description"] == "对一个片段的两项检查：先事实检查，再逻辑检查。"
    assert entry["properties"]["fact"]["description"].startswith("本片段的事实检查")
    assert result.label is AnswerLabel.CONSISTENT


@pytest.mark.parametrize("options", ["joint_stages=true", "batched=true,joint_stages=true,logic_stage=false"])
def test_joint_stages_need_batched_calls_and_the_logic_stage(options):
    with pytest.raises(MethodError, match="needs batched=true and the logic stage"):
        create_method(f"lface4rag:strategy=paper,{options}")


def test_the_dry_run_estimate_with_joint_stages_is_two_calls(make_model):
    item = Item(reference=REFERENCE, answer=" ".join(f"Sentence {n} is here." for n in range(6)))
    joint = create_method("lface4rag", strategy="paper", batched=True, joint_stages=True).estimate(item, make_model())
    apart = create_method("lface4rag", strategy="paper", batched=True).estimate(item, make_model())
    assert joint.calls == 2 and apart.calls == 3
    assert joint.completion_tokens == apart.completion_tokens  # one reply as long as the two stages' replies
    assert joint.prompt_tokens < apart.prompt_tokens  # the reference and the segments sent once, not twice
