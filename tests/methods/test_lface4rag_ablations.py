"""The paper's ablations (Tables 6-8) and the holistic strategy change the calls as they should."""

from __future__ import annotations

import typing

import pytest
from pydantic import ValidationError

from ragfacts.methods.lface4rag import AnswerLabel, CheckOptions, Strategy, check_answer
from ragfacts.methods.precision.strategies import STRATEGIES
from tests.methods.test_lface4rag import ANSWER, REFERENCE, SEG1, SEG2, decomposition, names, schema_name
from tests.scripted_server import Reply


async def test_conventional_decomposition_asks_for_atomic_statements_and_checks_each(make_model, scripted_server):
    statements = ["The Nile flows north.", "The Nile flows through Egypt.", "Rain swells the river."]
    scripted_server.enqueue(Reply.json({"statements": statements}))
    result = await check_answer(make_model(), REFERENCE, ANSWER, options=CheckOptions(decomposition="conventional"))
    requests = scripted_server.requests
    assert names(requests)[0] == "AtomicStatements"
    assert "Break the answer below into atomic statements" in requests[0].prompt
    assert sorted(names(requests)[1:]) == ["FactCheck"] * 3 + ["LogicCheck"] * 3
    assert [s.text for s in result.segments] == statements
    assert result.decomposition is not None and result.decomposition.stage == "decompose_conventional"


async def test_without_chain_of_thought_the_stages_ask_for_a_direct_verdict_only(make_model, scripted_server):
    scripted_server.enqueue(decomposition(SEG1, SEG2))
    result = await check_answer(make_model(), REFERENCE, ANSWER, options=CheckOptions(chain_of_thought=False))
    requests = scripted_server.requests
    assert sorted(names(requests)[1:]) == ["FactVerdict", "FactVerdict", "LogicVerdict", "LogicVerdict"]
    for request in requests[1:]:
        assert list(request.schema["properties"]) == ["error_type", "verdict"]
    segment = result.segments[0]
    assert segment.fact.points == [] and segment.fact.explanation == ""
    assert segment.logic is not None and segment.logic.reference_context is None
    assert result.label is AnswerLabel.CONSISTENT


async def test_without_chain_of_thought_an_inconsistent_verdict_still_carries_its_error_type(
    make_model, scripted_server
):
    scripted_server.enqueue(decomposition(SEG1))
    scripted_server.when("<segment>", Reply.json({"error_type": "KCont.", "verdict": "inconsistent"}))
    result = await check_answer(make_model(), REFERENCE, SEG1, options=CheckOptions(chain_of_thought=False))
    assert result.label is AnswerLabel.INCONSISTENT and [t.value for t in result.error_types] == ["KCont."]


async def test_without_the_logic_stage_each_segment_gets_one_fact_call(make_model, scripted_server):
    scripted_server.enqueue(decomposition(SEG1, SEG2))
    result = await check_answer(make_model(), REFERENCE, ANSWER, options=CheckOptions(logic_stage=False))
    assert names(scripted_server.requests) == ["Decomposition", "FactCheck", "FactCheck"]
    assert result.segments and all(segment.logic is None for segment in result.segments)
    assert result.label is AnswerLabel.CONSISTENT


async def test_ablations_combine(make_model, scripted_server):
    scripted_server.enqueue(Reply.json({"statements": [SEG1]}))
    options = CheckOptions(decomposition="conventional", chain_of_thought=False, logic_stage=False)
    await check_answer(make_model(), REFERENCE, SEG1, options=options)
    assert names(scripted_server.requests) == ["AtomicStatements", "FactVerdict"]


async def test_holistic_strategy_stops_after_one_call_when_the_answer_is_consistent(make_model, scripted_server):
    scripted_server.enqueue(Reply.json({"problems": [], "verdict": "consistent"}))
    options = CheckOptions(strategy="holistic_then_localise")
    result = await check_answer(make_model(), REFERENCE, ANSWER, options=options)
    assert names(scripted_server.requests) == ["HolisticJudgement"]
    assert result.label is AnswerLabel.CONSISTENT and result.segments == []
    assert result.holistic is not None and result.holistic.verdict == "consistent"


async def test_holistic_strategy_localises_and_types_errors_when_the_answer_is_inconsistent(
    make_model, scripted_server
):
    scripted_server.enqueue(
        Reply.json({"problems": ["'so the valley used to flood': causal link reversed"], "verdict": "inconsistent"}),
        decomposition(SEG1, SEG2),
    )
    scripted_server.when(
        f"<segment>\n{SEG2}", Reply.schema_valid(overrides={"verdict": "inconsistent", "error_type": "LCaus."})
    )
    options = CheckOptions(strategy="holistic_then_localise")
    result = await check_answer(make_model(), REFERENCE, ANSWER, options=options)
    assert names(scripted_server.requests)[:2] == ["HolisticJudgement", "Decomposition"]
    assert len(scripted_server.requests) == 6
    assert result.label is AnswerLabel.INCONSISTENT and result.reason is None
    assert [t.value for t in result.error_types] == ["LCaus."]
    assert result.holistic is not None and result.holistic.problems


async def test_holistic_verdict_decides_even_when_no_segment_is_found_inconsistent(make_model, scripted_server):
    scripted_server.enqueue(Reply.json({"problems": ["x"], "verdict": "inconsistent"}), decomposition(SEG1))
    options = CheckOptions(strategy="holistic_then_localise")
    result = await check_answer(make_model(), REFERENCE, SEG1, options=options)
    assert result.label is AnswerLabel.INCONSISTENT
    assert result.reason == "judged inconsistent as a whole; no segment was found inconsistent"


async def test_holistic_strategy_without_chain_of_thought_asks_for_the_verdict_alone(make_model, scripted_server):
    scripted_server.enqueue(Reply.json({"verdict": "consistent"}))
    options = CheckOptions(strategy="holistic_then_localise", chain_of_thought=False)
    await check_answer(make_model(), REFERENCE, ANSWER, options=options)
    request = scripted_server.requests[0]
    assert schema_name(request) == "HolisticVerdict" and list(request.schema["properties"]) == ["verdict"]


async def test_a_failed_holistic_judgement_is_unscored(make_model, scripted_server):
    scripted_server.enqueue(Reply.malformed())
    options = CheckOptions(strategy="holistic_then_localise")
    result = await check_answer(make_model(reasks=0), REFERENCE, ANSWER, options=options)
    assert result.label is AnswerLabel.UNSCORED and result.failure_count == 1
    assert len(scripted_server.requests) == 1


def test_every_strategy_name_has_an_implementation():
    assert set(typing.get_args(Strategy)) - {"auto"} == set(STRATEGIES)


def test_a_misspelled_option_fails_loudly():
    with pytest.raises(ValidationError):
        CheckOptions(chain_of_thougth=False)
    with pytest.raises(ValidationError):
        CheckOptions(strategy="holistic")
