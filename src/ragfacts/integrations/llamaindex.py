"""ragfacts's faithfulness and recall as LlamaIndex evaluators (`llama_index.core.evaluation.BaseEvaluator`).

    from ragfacts.integrations import Judge
    from ragfacts.integrations.llamaindex import RagfactsFaithfulnessEvaluator, RagfactsRecallEvaluator

    evaluator = RagfactsFaithfulnessEvaluator(judge=Judge(model="openai:gpt-4o-mini"))
    result = evaluator.evaluate_response(query=question, response=query_engine.query(question))
    result.passing, result.score, result.feedback

How the evaluator's arguments map to ragfacts's:

    query      -> question (optional)
    response   -> answer
    contexts   -> the precision reference, joined by blank lines (evaluate_response takes them from the
                  response's source nodes)
    reference  -> the recall ground truth (RagfactsRecallEvaluator), or `facts=[...]` to give the facts directly

`passing` is the judge's verdict (faithfulness: every segment consistent; recall: at least `min_recall`), `score`
the faithfulness or recall, `feedback` the verdict with each flagged segment or missing fact and the reasons.
An answer that could not be judged has `passing=False`, `score=None` and `invalid_result=True`, with the reason.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

from llama_index.core.evaluation import BaseEvaluator, EvaluationResult
from llama_index.core.prompts.mixin import PromptDictType

from ragfacts.integrations._explain import Judgement
from ragfacts.integrations._judge import Judge

__all__ = ["RagfactsFaithfulnessEvaluator", "RagfactsRecallEvaluator"]


class _RagfactsEvaluator(BaseEvaluator):
    def __init__(self, judge: Judge | None = None) -> None:
        self.judge = judge or Judge()

    def _get_prompts(self) -> PromptDictType:
        return {}  # the prompts are ragfacts's versioned prompt files, not LlamaIndex templates

    def _update_prompts(self, prompts_dict: PromptDictType) -> None:
        return None


class RagfactsFaithfulnessEvaluator(_RagfactsEvaluator):
    """Is the response faithful to the retrieved contexts? By ragfacts's precision method (lface4rag)."""

    async def aevaluate(
        self,
        query: str | None = None,
        response: str | None = None,
        contexts: Sequence[str] | None = None,
        reference: str | None = None,
        **kwargs: Any,
    ) -> EvaluationResult:
        if response is None or not contexts:
            raise ValueError("RagfactsFaithfulnessEvaluator needs a response and its contexts")
        judgement = await self.judge.afaithfulness(response, "\n\n".join(contexts), query)
        return _evaluation(judgement, query, response, contexts)


class RagfactsRecallEvaluator(_RagfactsEvaluator):
    """Does the response state the facts of the reference answer? By ragfacts's recall method (faaf)."""

    def __init__(self, judge: Judge | None = None, min_recall: float = 1.0) -> None:
        super().__init__(judge)
        self.min_recall = min_recall

    async def aevaluate(
        self,
        query: str | None = None,
        response: str | None = None,
        contexts: Sequence[str] | None = None,
        reference: str | None = None,
        facts: Sequence[str] | None = None,
        **kwargs: Any,
    ) -> EvaluationResult:
        if response is None or not (reference or facts):
            raise ValueError("RagfactsRecallEvaluator needs a response and a reference answer (or facts=[...])")
        judgement = await self.judge.arecall(
            response, facts=facts, ground_truth=reference, question=query, min_recall=self.min_recall
        )
        return _evaluation(judgement, query, response, contexts)


def _evaluation(
    judgement: Judgement, query: str | None, response: str, contexts: Sequence[str] | None
) -> EvaluationResult:
    return EvaluationResult(
        query=query,
        response=response,
        contexts=contexts,
        passing=judgement.passed,
        score=judgement.score,
        feedback=judgement.explanation,
        invalid_result=not judgement.judged,
        invalid_reason=None if judgement.judged else judgement.explanation,
    )
