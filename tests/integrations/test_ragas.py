"""RAGAS: ragfacts's faithfulness and recall as metrics of `ragas.evaluate`, with no RAGAS LLM, key or network."""

from __future__ import annotations

import asyncio
import math

import pytest

from ragfacts.text import delimit
from tests.integrations import import_or_skip
from tests.methods.test_lface4rag import REFERENCE, SEG1, decomposition, schema_name, segment_rule
from tests.scripted_server import Reply

ragas = import_or_skip("ragas", "ragas")

from ragas import EvaluationDataset, evaluate  # noqa: E402
from ragas.dataset_schema import SingleTurnSample  # noqa: E402

from ragfacts.integrations.ragas import RagfactsFaithfulness, RagfactsRecall  # noqa: E402

WRONG = "The Nile flows south through Egypt."
CONTEXTS = REFERENCE.split(". ")  # ragfacts's reference is the retrieved contexts, joined


def sample(response: str, **fields: object) -> dict[str, object]:
    return {"user_input": "Where does the Nile flow?", "response": response, "retrieved_contexts": CONTEXTS, **fields}


pytestmark = pytest.mark.filterwarnings("ignore::DeprecationWarning")  # ragas 0.4 deprecates evaluate()


def test_evaluate_scores_each_row_by_ragfacts_without_a_ragas_llm(judge, server):
    server.when(delimit("answer", SEG1), decomposition(SEG1))
    server.when(delimit("answer", WRONG), decomposition(WRONG))
    server.when(segment_rule(WRONG), Reply.schema_valid(overrides={"verdict": "inconsistent", "error_type": "KInve."}))
    # Recall: the server's schema-valid defaults draw one fact from each reference and judge it stated ("True").
    dataset = EvaluationDataset.from_list(
        [sample(SEG1, reference="The Nile flows north."), sample(WRONG, reference="The Nile flows north.")]
    )

    result = evaluate(
        dataset, metrics=[RagfactsFaithfulness(judge=judge), RagfactsRecall(judge=judge)], show_progress=False
    )

    frame = result.to_pandas()
    assert list(frame["ragfacts_faithfulness"]) == [1.0, 0.0]
    assert list(frame["ragfacts_recall"]) == [1.0, 1.0]
    stages = [r for r in server.requests if schema_name(r) in ("FactCheck", "LogicCheck")]
    assert len(stages) == 4 and all(delimit("reference", "\n\n".join(CONTEXTS)) in r.prompt for r in stages)


def test_an_answer_that_could_not_be_judged_scores_nan_not_zero(judge, server):
    server.when(delimit("answer", SEG1), Reply.malformed())
    score = RagfactsFaithfulness(judge=judge).single_turn_score(SingleTurnSample(**sample(SEG1)))
    assert math.isnan(score)


async def test_scoring_inside_a_running_event_loop_does_not_block_it(judge, server):
    server.enqueue(Reply.json({"facts": ["The Nile flows north."]}).delayed(0.3), Reply.json({"fact_0": "False"}))
    ticks = 0

    async def tick() -> None:
        nonlocal ticks
        while True:
            await asyncio.sleep(0.01)
            ticks += 1

    ticker = asyncio.create_task(tick())
    metric = RagfactsRecall(judge=judge)
    score = await metric.single_turn_ascore(SingleTurnSample(**sample(SEG1, reference="The Nile flows north.")))
    ticker.cancel()
    assert score == 0.0 and ticks >= 10  # the loop ran other tasks while the judge waited on the server


def test_the_metrics_declare_the_columns_they_read():
    assert RagfactsFaithfulness().required_columns == {"SINGLE_TURN": {"response", "retrieved_contexts"}}
    assert RagfactsRecall().required_columns == {"SINGLE_TURN": {"response", "reference"}}
    assert RagfactsFaithfulness().get_required_columns(with_optional=True)["SINGLE_TURN"] >= {"user_input"}


def test_a_dataset_without_retrieved_contexts_is_refused_before_any_call(judge, server):
    dataset = EvaluationDataset.from_list([{"user_input": "q", "response": SEG1, "reference": "r"}])
    with pytest.raises(ValueError, match="retrieved_contexts"):
        evaluate(dataset, metrics=[RagfactsFaithfulness(judge=judge)], show_progress=False)
    assert server.requests == []
