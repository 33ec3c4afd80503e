"""ragfacts.testing: assert_faithful and assert_recalls pass a supported answer and fail with the reasons."""

from __future__ import annotations

import pytest

from ragfacts.integrations import Judge
from ragfacts.testing import assert_faithful, assert_recalls, default_judge, set_default_judge
from ragfacts.text import delimit
from tests.methods.test_lface4rag import REFERENCE, SEG1, decomposition, fact_reply, logic_reply
from tests.scripted_server import Reply, ScriptedServer

WRONG = "The Nile flows south through Egypt."
FACTS = ["The Nile flows north.", "The Aswan High Dam ended the yearly flood."]


def script_wrong_answer(server: ScriptedServer) -> None:
    """The judge decomposes WRONG into itself, finds its fact inverted and its logic sound."""
    server.enqueue(
        decomposition(WRONG),
        fact_reply(
            "inconsistent",
            "KInve.",
            point="The Nile flows south",
            check="the reference says the Nile flows north",
        ),
        logic_reply("consistent"),
    )


def test_a_consistent_answer_passes(judge, server):
    server.enqueue(decomposition(SEG1))
    assert_faithful(SEG1, REFERENCE, question="Where does the Nile flow?", judge=judge)
    assert delimit("question", "Where does the Nile flow?") in server.requests[0].prompt


def test_an_inconsistent_answer_fails_showing_the_verdict_segment_error_type_and_reason(judge, server):
    script_wrong_answer(server)
    with pytest.raises(AssertionError) as failure:
        assert_faithful(WRONG, REFERENCE, judge=judge.with_options(settings={"concurrency": 1}))
    message = str(failure.value)
    assert message.splitlines()[0] == "ragfacts (lface4rag): INCONSISTENT, faithfulness 0.00"
    assert f'flagged segment #1 (inconsistent): "{WRONG}"' in message
    assert "KInve. entity inversion" in message
    assert "The Nile flows south — the reference says the Nile flows north" in message


def test_an_answer_that_could_not_be_judged_fails_and_says_so(judge, server):
    server.when(delimit("answer", SEG1), Reply.malformed())
    with pytest.raises(AssertionError, match=r"could not judge this answer \(UNSCORED\)") as failure:
        assert_faithful(SEG1, REFERENCE, judge=judge)
    assert "failed call: decompose" in str(failure.value)


def test_an_empty_reference_is_refused_before_any_call(judge, server):
    with pytest.raises(ValueError, match="needs a reference"):
        assert_faithful(SEG1, "  ", judge=judge)
    assert server.requests == []


def test_recalled_facts_pass(judge, server):
    server.enqueue(Reply.json({"fact_0": "True", "fact_1": "True"}))
    assert_recalls("The Nile flows north; the Aswan dam ended its flood.", facts=FACTS, judge=judge)


def test_a_missing_fact_fails_naming_it_unless_min_recall_allows_it(judge, server):
    answer = "The Nile flows north."
    server.enqueue(Reply.json({"fact_0": "True", "fact_1": "False"}))
    with pytest.raises(AssertionError) as failure:
        assert_recalls(answer, facts=FACTS, judge=judge)
    message = str(failure.value)
    assert message.splitlines()[0] == "ragfacts (faaf): recall 0.50, below the 1.00 required"
    assert f'not recalled: fact 2: "{FACTS[1]}"' in message and FACTS[0] not in message
    server.enqueue(Reply.json({"fact_0": "True", "fact_1": "False"}))
    assert_recalls(answer, facts=FACTS, min_recall=0.5, judge=judge.with_options(settings={"cache": False}))


def test_recall_that_could_not_be_judged_fails_even_when_min_recall_is_zero(judge, server):
    server.when("facts", Reply.error(400))
    with pytest.raises(AssertionError, match=r"could not judge recall \(UNSCORED\)") as failure:
        assert_recalls("The Nile flows north.", ground_truth="The Nile flows north.", min_recall=0.0, judge=judge)
    assert "fact generation failed" in str(failure.value)


def test_recall_needs_facts_or_a_ground_truth(judge):
    with pytest.raises(ValueError, match="facts= or a ground_truth="):
        assert_recalls("The Nile flows north.", judge=judge)


def test_without_judge_the_assertions_use_the_default_judge(judge, server):
    before = default_judge()
    set_default_judge(judge)
    try:
        server.enqueue(decomposition(SEG1))
        assert_faithful(SEG1, REFERENCE)
        assert len(server.requests) == 3
    finally:
        set_default_judge(before)


def test_with_options_changes_only_what_it_is_given():
    judge = Judge(model="openai:a", method="lface4rag:strategy=paper")
    assert judge.with_options(model="openai:b", base_url=None) == Judge(model="openai:b", method=judge.method)
