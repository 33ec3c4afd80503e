"""LlamaIndex: ragfacts's evaluators give passing, score and feedback, from strings or from a Response's sources."""

from __future__ import annotations

import asyncio

import pytest

from ragfacts.text import delimit
from tests.integrations import import_or_skip
from tests.methods.test_lface4rag import REFERENCE, SEG1, decomposition, segment_rule
from tests.scripted_server import Reply

import_or_skip("llama_index.core", "llamaindex")

from llama_index.core.base.response.schema import Response  # noqa: E402
from llama_index.core.schema import NodeWithScore, TextNode  # noqa: E402

from ragfacts.integrations.llamaindex import RagfactsFaithfulnessEvaluator, RagfactsRecallEvaluator  # noqa: E402

WRONG = "The Nile flows south through Egypt."
CONTEXTS = REFERENCE.split(". ")
QUESTION = "Where does the Nile flow?"


def test_a_faithful_response_passes_with_score_one(judge, server):
    server.enqueue(decomposition(SEG1))
    result = RagfactsFaithfulnessEvaluator(judge=judge).evaluate(query=QUESTION, response=SEG1, contexts=CONTEXTS)
    assert result.passing is True and result.score == 1.0 and not result.invalid_result
    assert result.feedback == "ragfacts (lface4rag): CONSISTENT, faithfulness 1.00"
    assert delimit("question", QUESTION) in server.requests[0].prompt


def test_evaluate_response_judges_against_the_responses_source_nodes(judge, server):
    server.when(delimit("answer", WRONG), decomposition(WRONG))
    server.when(segment_rule(WRONG), Reply.schema_valid(overrides={"verdict": "inconsistent", "error_type": "KConf."}))
    nodes = [NodeWithScore(node=TextNode(text=text), score=1.0) for text in CONTEXTS]

    result = RagfactsFaithfulnessEvaluator(judge=judge).evaluate_response(
        query=QUESTION, response=Response(response=WRONG, source_nodes=nodes)
    )

    assert result.passing is False and result.score == 0.0 and result.contexts == CONTEXTS
    assert f'flagged segment #1 (inconsistent): "{WRONG}"' in result.feedback and "KConf." in result.feedback
    stages = [r for r in server.requests if segment_rule(WRONG) in r.prompt]
    assert stages and all(delimit("reference", "\n\n".join(CONTEXTS)) in r.prompt for r in stages)


def test_a_response_that_could_not_be_judged_is_an_invalid_result_not_a_score(judge, server):
    server.when(delimit("answer", SEG1), Reply.malformed())
    result = RagfactsFaithfulnessEvaluator(judge=judge).evaluate(response=SEG1, contexts=CONTEXTS)
    assert result.passing is False and result.score is None and result.invalid_result
    assert "could not judge this answer (UNSCORED)" in (result.invalid_reason or "")


async def test_recall_against_the_reference_answer_inside_a_running_loop(judge, server):
    server.enqueue(
        Reply.json({"facts": ["The Nile flows north.", "The Aswan High Dam ended the flood."]}),
        Reply.json({"fact_0": "True", "fact_1": "False"}),
    )
    evaluator = RagfactsRecallEvaluator(judge=judge, min_recall=0.5)
    result = await evaluator.aevaluate(query=QUESTION, response=SEG1, reference="The Nile flows north; the dam...")
    assert result.passing is True and result.score == 0.5
    assert 'not recalled: fact 2: "The Aswan High Dam ended the flood."' in result.feedback


async def test_evaluators_run_concurrently_on_one_loop(judge, server):
    server.when(delimit("answer", SEG1), decomposition(SEG1).delayed(0.2))
    evaluator = RagfactsFaithfulnessEvaluator(judge=judge)
    questions = [f"{QUESTION} ({n})" for n in range(3)]  # three prompts: none is answered from the cache
    results = await asyncio.gather(*(evaluator.aevaluate(q, SEG1, CONTEXTS) for q in questions))
    assert [r.passing for r in results] == [True] * len(questions)
    assert server.max_in_flight >= 2  # the judgements overlapped: neither the loop nor the calls were serialised


def test_missing_inputs_are_refused_naming_what_is_needed(judge, server):
    with pytest.raises(ValueError, match="a response and its contexts"):
        RagfactsFaithfulnessEvaluator(judge=judge).evaluate(response=SEG1)
    with pytest.raises(ValueError, match="reference answer"):
        RagfactsRecallEvaluator(judge=judge).evaluate(response=SEG1, contexts=CONTEXTS)
    assert server.requests == []
