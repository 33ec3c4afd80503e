"""FaaF: one structured call per passage (or chunk), one enum field per fact, honest failures."""

from __future__ import annotations

import pytest

from ragfacts.methods.faaf import (
    NOT_CLEAR,
    fact_sheet,
    recall,
    verify_facts,
)
from ragfacts.models import FailureKind, StructuredMode, UsageLedger
from ragfacts.models.structured import parse_reply
from tests.scripted_server import Reply

FACTS = [
    "Paris is the capital of France.",
    "The Seine flows through Paris.",
    "Paris hosted the 2024 Summer Olympics.",
]
PASSAGE = "Paris, the capital of France, lies on the Seine."


async def test_fact_sheet_has_one_enum_field_per_fact_in_order(make_model, scripted_server):
    await verify_facts(make_model(), FACTS, PASSAGE, mode="tf")
    assert len(scripted_server.requests) == 1
    schema = scripted_server.requests[0].schema
    assert list(schema["properties"]) == ["fact_0", "fact_1", "fact_2"]
    assert schema["required"] == ["fact_0", "fact_1", "fact_2"]
    for index, fact in enumerate(FACTS):
        field = schema["properties"][f"fact_{index}"]
        assert field["title"] == fact
        assert field["enum"] == ["True", "False"]
        assert "passage" in field["description"]


async def test_three_way_sheet_offers_not_clear(make_model, scripted_server):
    await verify_facts(make_model(), FACTS, PASSAGE, mode="tfn")
    field = scripted_server.requests[0].schema["properties"]["fact_0"]
    assert field["enum"] == ["True", "False", "Not clear from the given passage"]


async def test_citation_field_comes_before_each_verdict(make_model, scripted_server):
    await verify_facts(make_model(), FACTS, PASSAGE, mode="tf", citations=True)
    properties = scripted_server.requests[0].schema["properties"]
    assert list(properties) == ["citation_0", "fact_0", "citation_1", "fact_1", "citation_2", "fact_2"]
    assert properties["citation_1"]["type"] == "string"
    assert "fact_1" in properties["citation_1"]["description"]


async def test_not_clear_maps_to_false_and_keeps_the_raw_value(make_model, scripted_server):
    scripted_server.enqueue(Reply.json({"fact_0": "True", "fact_1": "False", "fact_2": NOT_CLEAR}))
    result = await verify_facts(make_model(), FACTS, PASSAGE, mode="tfn")
    assert [v.verdict for v in result.verdicts] == [True, False, False]
    assert [v.raw for v in result.verdicts] == ["True", "False", NOT_CLEAR]
    assert result.n_true == 1 and result.n_false == 2
    assert result.recall == pytest.approx(1 / 3)
    assert result.method == "faaf-tfn"


async def test_key_variants_are_tolerated_without_a_reask(make_model, scripted_server):
    scripted_server.enqueue(
        Reply.json({"fact 0": "true", "Fact_1": "FALSE", "fact2": "not clear from the given passage"})
    )
    result = await verify_facts(make_model(), FACTS, PASSAGE, mode="tfn")
    assert [v.raw for v in result.verdicts] == ["True", "False", NOT_CLEAR]
    assert len(scripted_server.requests) == 1


async def test_reply_keyed_by_fact_text_or_wrapped_is_accepted(make_model, scripted_server):
    by_text = {FACTS[0]: "True", FACTS[1]: "False", FACTS[2]: "True"}
    scripted_server.enqueue(Reply.json({"FactChecker": by_text}))
    result = await verify_facts(make_model(), FACTS, PASSAGE, mode="tf")
    assert [v.verdict for v in result.verdicts] == [True, False, True]


async def test_a_value_outside_the_enum_is_reasked_then_failed_never_guessed(make_model, scripted_server):
    bad = Reply.json({"fact_0": "Maybe", "fact_1": "True", "fact_2": "True"})
    scripted_server.enqueue(bad, bad)
    result = await verify_facts(make_model(reasks=1), FACTS, PASSAGE, mode="tf")
    assert len(scripted_server.requests) == 2
    assert result.n_failed == 3 and result.n_true == 0
    assert result.failures[0].kind is FailureKind.INVALID_OUTPUT
    assert result.verdicts and all(v.unscored == "failed" and v.verdict is None for v in result.verdicts)


async def test_failed_call_keeps_its_facts_in_the_denominator(make_model, scripted_server):
    scripted_server.enqueue(Reply.error(400))
    result = await verify_facts(make_model(), FACTS, PASSAGE)
    assert result.n_facts == 3 and result.n_failed == 3
    assert result.recall == 0.0 and result.recall_upper == 1.0
    assert len(result.failures) == 1 and result.failures[0].kind is FailureKind.REQUEST
    assert result.completions[0]["failure"]["kind"] == "request"


async def test_faaf_makes_one_call_per_passage(make_model, scripted_server):
    facts = [f"Fact number {n} holds." for n in range(7)]
    result = await verify_facts(make_model(), facts, PASSAGE)
    assert len(scripted_server.requests) == 1
    assert result.usage.calls == 1 and result.n_facts == 7


async def test_faaf_makes_one_call_per_chunk(make_model, scripted_server):
    facts = [f"Fact number {n} holds." for n in range(5)]
    result = await verify_facts(make_model(), facts, PASSAGE, chunk_size=2)
    assert len(scripted_server.requests) == 3
    titles = [
        [field["title"] for field in request.schema["properties"].values()] for request in scripted_server.requests
    ]
    assert sorted(len(t) for t in titles) == [1, 2, 2]
    assert sorted(title for chunk in titles for title in chunk) == sorted(facts)
    assert [v.index for v in result.verdicts] == [0, 1, 2, 3, 4]
    assert [v.fact for v in result.verdicts] == facts
    assert result.usage.calls == 3 and result.usage.prompt_tokens == 33 and result.usage.completion_tokens == 21


async def test_one_failed_chunk_does_not_hide_the_others(make_model, scripted_server):
    # json_text mode renders the sheet into the prompt, so each chunk can be answered by its facts.
    model = make_model(mode=StructuredMode.JSON_TEXT, reasks=0)
    scripted_server.when("The Seine flows", Reply.malformed())
    scripted_server.when("Olympics", Reply.json({"fact_0": "True"}))
    result = await verify_facts(model, FACTS, PASSAGE, mode="tf", chunk_size=2)
    assert len(scripted_server.requests) == 2
    assert [v.unscored for v in result.verdicts] == ["failed", "failed", None]
    assert result.verdicts[2].verdict is True
    assert result.n_failed == 2 and len(result.failures) == 1


async def test_citations_are_checked_against_the_passage(make_model, scripted_server):
    scripted_server.enqueue(
        Reply.json(
            {
                "citation_0": "the capital of France",
                "fact_0": "True",
                "citation_1": "LIES ON THE SEINE",
                "fact_1": "True",
                "citation_2": "Paris hosted the Games",
                "fact_2": "True",
            }
        )
    )
    result = await verify_facts(make_model(), FACTS, PASSAGE, mode="tf", citations=True)
    assert [v.citation_match for v in result.verdicts] == ["exact", "normalised", None]
    assert result.citations_given == 3 and result.citations_verified == 2
    assert result.method == "faaf-tf+citation"


async def test_chinese_text_gets_chinese_instructions(make_model, scripted_server):
    result = await verify_facts(make_model(), ["北京是中国的首都。"], "北京是中华人民共和国的首都。", mode="tfn")
    request = scripted_server.requests[0]
    assert "文段" in request.prompt
    assert "文段" in request.schema["properties"]["fact_0"]["description"]
    assert result.lang == "zh"
    assert result.completions[0]["prompt_version"].startswith("verify_facts/zh@")


async def test_the_schema_is_rendered_when_the_backend_does_not_show_it(make_model, scripted_server):
    await verify_facts(make_model(schema_in_prompt=True), FACTS, PASSAGE, mode="tfn")
    prompt = scripted_server.requests[0].prompt
    assert all(fact in prompt for fact in FACTS)
    assert "Not clear from the given passage" in prompt


async def test_no_facts_means_no_call(make_model, scripted_server):
    result = await verify_facts(make_model(), [], PASSAGE)
    assert scripted_server.requests == []
    assert result.recall is None


def test_fact_sheet_rejects_an_unknown_mode():
    with pytest.raises(ValueError, match="mode"):
        fact_sheet(FACTS, mode="yes/no")  # type: ignore[arg-type]


def test_fact_sheets_of_one_shape_share_their_model_and_differ_in_their_titles_and_context():
    first, second = fact_sheet(["The Nile flows north."]), fact_sheet(["The dam was finished in 1970."])
    assert first.model is second.model  # made once per number of facts, mode, citations and language
    titles = [sheet.json_schema["properties"]["fact_0"]["title"] for sheet in (first, second)]
    assert titles == ["The Nile flows north.", "The dam was finished in 1970."]
    # a model that keys its verdict by the fact's text is read by this call's facts, not another's
    reply = '{"The dam was finished in 1970": "True"}'
    assert parse_reply(reply, second).fact_0 == "True"  # type: ignore[attr-defined]
    with pytest.raises(ValueError):
        parse_reply(reply, first)


async def test_verify_facts_rejects_a_bad_mode_or_chunk_size(make_model):
    with pytest.raises(ValueError, match="mode"):
        await verify_facts(make_model(), FACTS, PASSAGE, mode="yn")  # type: ignore[arg-type]
    with pytest.raises(ValueError, match="chunk_size"):
        await verify_facts(make_model(), FACTS, PASSAGE, chunk_size=0)


async def test_recall_generates_facts_then_verifies_them(make_model, scripted_server):
    ledger = UsageLedger()
    scripted_server.enqueue(
        Reply.json({"facts": ["Paris is the capital of France.", "The Seine flows through Paris."]}),
        Reply.json({"fact_0": "True", "fact_1": NOT_CLEAR}),
    )
    result = await recall(
        make_model(ledger=ledger), "Tell me about Paris.", "Paris is the capital of France, on the Seine.", PASSAGE
    )
    assert result.facts == FACTS[:2]
    assert result.recall == 0.5
    assert result.fact_generation is not None and result.fact_generation.ok
    assert set(ledger.stages) == {"generate_facts", "faaf"}
    assert "Tell me about Paris." in scripted_server.requests[0].prompt


async def test_recall_with_given_facts_skips_generation(make_model, scripted_server):
    result = await recall(make_model(), None, None, PASSAGE, facts=FACTS[:1], mode="tf")
    assert len(scripted_server.requests) == 1
    assert result.fact_generation is None and result.recall == 1.0


async def test_recall_needs_facts_or_a_ground_truth(make_model):
    with pytest.raises(ValueError, match="ground truth"):
        await recall(make_model(), "q", None, PASSAGE)


async def test_recall_after_a_failed_generation_has_no_facts_and_says_why(make_model, scripted_server):
    scripted_server.enqueue(Reply.error(400))
    result = await recall(make_model(), "q", "Paris is in France.", PASSAGE)
    assert result.facts == [] and result.recall is None and not result.ok
    assert result.fact_generation is not None and result.fact_generation.failure is not None
    assert len(scripted_server.requests) == 1
    outcome = result.outcome()
    assert outcome.score is None and outcome.failures == 1 and not outcome.complete


async def test_the_default_is_all_facts_in_one_call(make_model, scripted_server):
    # Measured on the embedded model: smaller chunks made it no stricter, at up to 3.8x the calls.
    await recall(make_model(), None, None, PASSAGE, facts=FACTS)
    assert len(scripted_server.requests) == 1


async def test_recall_outcome_counts_unscored_facts_as_absent(make_model, scripted_server):
    scripted_server.enqueue(Reply.malformed(), Reply.malformed(), Reply.malformed())
    result = await recall(make_model(), None, None, PASSAGE, facts=FACTS[:2])
    outcome = result.outcome()
    assert outcome.score == 0.0 and outcome.score_upper == 1.0 and outcome.units == 2 and outcome.failures == 1
