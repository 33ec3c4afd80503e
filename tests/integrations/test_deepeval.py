"""DeepEval: ragfacts's metrics measure an LLMTestCase offline, and assert_test fails with the flagged segment.

`deepeval.evaluate` is tested too: with telemetry off and no Confident AI key it makes no call past loopback (the
autouse guard of conftest.py fails any test that tries).
"""

from __future__ import annotations

import pytest

from ragfacts.text import delimit
from tests.integrations import import_or_skip
from tests.methods.test_lface4rag import REFERENCE, SEG1, decomposition, segment_rule
from tests.scripted_server import Reply

import_or_skip("deepeval", "deepeval")

from deepeval import assert_test, evaluate  # noqa: E402
from deepeval.errors import MissingTestCaseParamsError  # noqa: E402
from deepeval.test_case import LLMTestCase  # noqa: E402

from ragfacts.integrations.deepeval import RagfactsFaithfulnessMetric, RagfactsRecallMetric  # noqa: E402

WRONG = "The Nile flows south through Egypt."
CONTEXTS = REFERENCE.split(". ")
QUESTION = "Where does the Nile flow?"


@pytest.fixture(autouse=True)
def in_tmp(tmp_path, monkeypatch):
    monkeypatch.chdir(tmp_path)  # deepeval writes its .deepeval folder in the working directory


def case(answer: str, **fields: object) -> LLMTestCase:
    return LLMTestCase(input=QUESTION, actual_output=answer, retrieval_context=CONTEXTS, **fields)


def script_wrong(server) -> None:
    server.when(delimit("answer", WRONG), decomposition(WRONG))
    server.when(segment_rule(WRONG), Reply.schema_valid(overrides={"verdict": "inconsistent", "error_type": "KInve."}))


def test_measure_scores_a_faithful_answer(judge, server):
    server.enqueue(decomposition(SEG1))
    metric = RagfactsFaithfulnessMetric(judge=judge)
    assert metric.measure(case(SEG1)) == 1.0
    assert metric.is_successful() and metric.error is None
    assert metric.reason == "ragfacts (lface4rag): CONSISTENT, faithfulness 1.00"
    assert delimit("reference", "\n\n".join(CONTEXTS)) in server.requests[1].prompt


def test_assert_test_fails_showing_the_flagged_segment(judge, server):
    script_wrong(server)
    with pytest.raises(AssertionError) as failure:
        assert_test(case(WRONG), [RagfactsFaithfulnessMetric(judge=judge)], run_async=False)
    message = str(failure.value)
    assert "ragfacts faithfulness (score: 0.0, threshold: 1.0" in message
    assert f'flagged segment #1 (inconsistent): "{WRONG}"' in message
    assert "KInve." in message


async def test_a_measure_judges_recall_against_the_expected_output(judge, server):
    server.enqueue(
        Reply.json({"facts": ["The Nile flows north.", "The Aswan High Dam ended the flood."]}),
        Reply.json({"fact_0": "True", "fact_1": "False"}),
    )
    metric = RagfactsRecallMetric(threshold=0.5, judge=judge)
    assert await metric.a_measure(case(SEG1, expected_output="The Nile flows north; the dam ended the flood.")) == 0.5
    assert metric.is_successful()
    assert 'not recalled: fact 2: "The Aswan High Dam ended the flood."' in metric.reason


def test_an_answer_that_could_not_be_judged_is_an_error_not_a_score(judge, server):
    server.when(delimit("answer", SEG1), Reply.malformed())
    metric = RagfactsFaithfulnessMetric(judge=judge)
    assert metric.measure(case(SEG1)) is None
    assert not metric.is_successful() and "could not judge this answer (UNSCORED)" in metric.error


def test_evaluate_runs_both_metrics_offline(judge, server):
    server.when(delimit("answer", SEG1), decomposition(SEG1))
    script_wrong(server)
    cases = [case(SEG1, expected_output="The Nile flows north."), case(WRONG, expected_output="The Nile flows north.")]
    metrics = [RagfactsFaithfulnessMetric(judge=judge), RagfactsRecallMetric(judge=judge)]

    result = evaluate(cases, metrics)

    scores = {
        (test.input, test.actual_output, data.name): data.score
        for test in result.test_results
        for data in test.metrics_data
    }
    assert scores == {
        (QUESTION, SEG1, "ragfacts faithfulness"): 1.0,
        (QUESTION, SEG1, "ragfacts recall"): 1.0,
        (QUESTION, WRONG, "ragfacts faithfulness"): 0.0,
        (QUESTION, WRONG, "ragfacts recall"): 1.0,
    }


def test_a_test_case_without_the_fields_a_metric_reads_is_refused(judge, server):
    with pytest.raises(MissingTestCaseParamsError, match="retrieval_context"):
        RagfactsFaithfulnessMetric(judge=judge).measure(LLMTestCase(input=QUESTION, actual_output=SEG1))
    with pytest.raises(MissingTestCaseParamsError, match="expected_output"):
        RagfactsRecallMetric(judge=judge).measure(case(SEG1))
    assert server.requests == []
