"""The published baselines: their call patterns and aggregations, on the scripted server."""

from __future__ import annotations

import pytest

from ragfacts.items import Item
from ragfacts.methods.base import create_method
from ragfacts.methods.precision.results import AnswerLabel
from ragfacts.text import delimit
from tests.scripted_server import Reply

REFERENCE = "The Nile flows north into the Mediterranean Sea. It is about 6,650 km long."
ANSWER = "The Nile flows north. It is 6,650 km long."
ITEM = Item(id="nile", question="Tell me about the Nile.", reference=REFERENCE, answer=ANSWER)


def schema_names(server) -> list[str]:
    return [request.schema["title"] for request in server.requests]


# FActScore: one extraction call per sentence, one verification call per fact.


async def test_factscore_breaks_each_sentence_then_verifies_each_fact_alone(make_model, scripted_server):
    scripted_server.when(delimit("sentence", "The Nile flows north."), Reply.json({"facts": ["The Nile flows north."]}))
    scripted_server.when(
        delimit("sentence", "It is 6,650 km long."),
        Reply.json({"facts": ["The Nile is long.", "The Nile is 6,650 km."]}),
    )
    scripted_server.when(delimit("fact", "The Nile is long."), Reply.json({"verdict": "False"}))
    scripted_server.when("<fact>", Reply.json({"verdict": "True"}))
    result = await create_method("factscore").evaluate(ITEM, make_model())
    assert schema_names(scripted_server) == ["AtomicFacts"] * 2 + ["FactTruth"] * 3
    assert [(c.text, c.verdict) for c in result.claims] == [
        ("The Nile flows north.", "supported"),
        ("The Nile is long.", "unsupported"),
        ("The Nile is 6,650 km.", "supported"),
    ]
    assert result.label is AnswerLabel.INCONSISTENT and result.score == pytest.approx(2 / 3)
    assert result.outcome().usage.calls == 5


async def test_factscore_with_a_failed_verification_and_no_false_fact_is_unscored(make_model, scripted_server):
    scripted_server.when("<sentence>", Reply.json({"facts": ["A fact."]}))
    scripted_server.when("<fact>", Reply.error(400), times=1)
    scripted_server.when("<fact>", Reply.json({"verdict": "True"}))
    result = await create_method("factscore").evaluate(ITEM, make_model())
    assert result.label is AnswerLabel.UNSCORED and result.failure_count == 1
    outcome = result.outcome()
    assert outcome.score == 0.5 and outcome.score_upper == 1.0 and not outcome.complete


# FELM: one call; segment numbers must exist.


async def test_felm_numbers_the_sentences_and_takes_the_wrong_ones_in_one_call(make_model, scripted_server):
    scripted_server.enqueue(Reply.json({"errors": [{"segment": 2, "reason": "length not given"}]}))
    result = await create_method("felm").evaluate(ITEM, make_model())
    assert len(scripted_server.requests) == 1
    assert (
        delimit("segments", "1. The Nile flows north.\n2. It is 6,650 km long.") in scripted_server.requests[0].prompt
    )
    segment = scripted_server.requests[0].schema["properties"]["errors"]["items"]["properties"]["segment"]
    assert segment["enum"] == [1, 2]
    assert [c.verdict for c in result.claims] == ["supported", "unsupported"]
    assert result.claims[1].reason == "length not given" and result.label is AnswerLabel.INCONSISTENT
    assert result.score == 0.5


async def test_felm_asks_again_for_a_segment_that_does_not_exist(make_model, scripted_server):
    scripted_server.enqueue(Reply.json({"errors": [{"segment": 9, "reason": "?"}]}), Reply.json({"errors": []}))
    result = await create_method("felm").evaluate(ITEM, make_model())
    assert len(scripted_server.requests) == 2 and result.label is AnswerLabel.CONSISTENT and result.score == 1.0


# RAGAS faithfulness: statements, then one NLI call for all of them.


async def test_ragas_judges_all_statements_in_one_call_and_keeps_the_faithful_share(make_model, scripted_server):
    scripted_server.enqueue(
        Reply.json({"statements": ["The Nile flows north.", "The Nile is 6,650 km long."]}),
        Reply.json(
            {
                "verdicts": [
                    {"statement": "The Nile flows north.", "reason": "stated", "verdict": 1},
                    {"statement": "The Nile is 6,650 km long.", "reason": "about", "verdict": 0},
                ]
            }
        ),
    )
    result = await create_method("ragas").evaluate(ITEM, make_model())
    assert schema_names(scripted_server) == ["Statements", "Faithfulness"]
    assert delimit("statements", "1. The Nile flows north.\n2. The Nile is 6,650 km long.") in (
        scripted_server.requests[1].prompt
    )
    assert result.score == 0.5 and result.label is AnswerLabel.INCONSISTENT and result.claims[1].reason == "about"


async def test_ragas_threshold_decides_the_label_from_the_score(make_model, scripted_server):
    scripted_server.when("<answer>", Reply.json({"statements": ["a", "b"]}))
    verdicts = [{"statement": s, "reason": "r", "verdict": v} for s, v in (("a", 1), ("b", 0))]
    scripted_server.when("<statements>", Reply.json({"verdicts": verdicts}))
    result = await create_method("ragas:threshold=0.5").evaluate(ITEM, make_model())
    assert result.label is AnswerLabel.CONSISTENT and result.score == 0.5


async def test_ragas_with_a_failed_judgement_is_unscored(make_model, scripted_server):
    scripted_server.when("<answer>", Reply.json({"statements": ["a"]}))
    scripted_server.when("<statements>", Reply.error(500))
    result = await create_method("ragas").evaluate(ITEM, make_model(max_retries=0))
    assert result.label is AnswerLabel.UNSCORED and result.claims[0].verdict is None


# RefChecker: triplets, then one check per triplet; strict, soft and major aggregation.

TRIPLETS = [
    {"subject": "Nile", "predicate": "flows", "object": "north"},
    {"subject": "Nile", "predicate": "length", "object": "6,650 km"},
    {"subject": "Nile", "predicate": "ends in", "object": "Red Sea"},
]


def refchecker_replies(server, verdicts: dict[str, str]) -> None:
    server.when("<answer>", Reply.json({"triplets": TRIPLETS}))
    for obj, verdict in verdicts.items():
        server.when(f"{obj})", Reply.json({"verdict": verdict}))


@pytest.mark.parametrize(
    ("aggregation", "verdicts", "label"),
    [
        ("strict", {"north": "Entailment", "6,650 km": "Entailment", "Red Sea": "Neutral"}, AnswerLabel.INCONSISTENT),
        ("strict", {"north": "Entailment", "6,650 km": "Entailment", "Red Sea": "Entailment"}, AnswerLabel.CONSISTENT),
        ("soft", {"north": "Entailment", "6,650 km": "Entailment", "Red Sea": "Contradiction"}, AnswerLabel.CONSISTENT),
        ("soft", {"north": "Entailment", "6,650 km": "Neutral", "Red Sea": "Contradiction"}, AnswerLabel.INCONSISTENT),
        (
            "major",
            {"north": "Entailment", "6,650 km": "Entailment", "Red Sea": "Contradiction"},
            AnswerLabel.CONSISTENT,
        ),
        ("major", {"north": "Entailment", "6,650 km": "Neutral", "Red Sea": "Contradiction"}, AnswerLabel.INCONSISTENT),
    ],
)
async def test_refchecker_checks_each_triplet_and_aggregates(make_model, scripted_server, aggregation, verdicts, label):
    refchecker_replies(scripted_server, verdicts)
    result = await create_method(f"refchecker:aggregation={aggregation}").evaluate(ITEM, make_model())
    assert schema_names(scripted_server) == ["Triplets"] + ["TripletCheck"] * 3
    assert result.label is label
    assert result.claims[0].text == "(Nile, flows, north)"
    assert result.score == pytest.approx(sum(v == "Entailment" for v in verdicts.values()) / 3)


async def test_refchecker_maps_neutral_to_unsupported_and_contradiction_to_contradicted(make_model, scripted_server):
    refchecker_replies(scripted_server, {"north": "Entailment", "6,650 km": "Neutral", "Red Sea": "Contradiction"})
    result = await create_method("refchecker").evaluate(ITEM, make_model())
    assert [c.verdict for c in result.claims] == ["supported", "unsupported", "contradicted"]


@pytest.mark.parametrize("name", ["factscore", "felm", "ragas", "refchecker", "holistic"])
async def test_every_baseline_asks_in_chinese_for_a_chinese_answer(make_model, scripted_server, name):
    item = Item(reference="尼罗河向北流入地中海。", answer="尼罗河向北流。", question="尼罗河流向哪里？")
    await create_method(name).evaluate(item, make_model())
    assert "参考资料" in scripted_server.requests[-1].prompt or "上下文" in scripted_server.requests[-1].prompt
    assert scripted_server.requests  # not vacuous
    assert all("Reply with one JSON object" not in r.prompt for r in scripted_server.requests)


@pytest.mark.parametrize("name", ["factscore", "felm", "ragas", "refchecker"])
async def test_an_answer_without_claims_is_unscored_not_consistent(make_model, scripted_server, name):
    scripted_server.when("<sentence>", Reply.json({"facts": []}))
    scripted_server.when("<answer>", Reply.json({"statements": [], "triplets": []}))
    result = await create_method(name).evaluate(Item(reference="R.", answer="Hm."), make_model())
    if name == "felm":  # FELM judges sentences, which the answer always has
        assert result.claims and result.label is not AnswerLabel.UNSCORED
    else:
        assert result.label is AnswerLabel.UNSCORED and result.reason == "no claims were extracted from the answer"
