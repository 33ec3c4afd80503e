"""ragfacts's faithfulness and recall as DeepEval metrics (`deepeval.metrics.BaseMetric`).

    from deepeval import assert_test
    from deepeval.test_case import LLMTestCase
    from ragfacts.integrations import Judge
    from ragfacts.integrations.deepeval import RagfactsFaithfulnessMetric, RagfactsRecallMetric

    judge = Judge(model="openai:gpt-4o-mini")
    case = LLMTestCase(input=question, actual_output=answer, retrieval_context=chunks, expected_output=truth)
    assert_test(case, [RagfactsFaithfulnessMetric(judge=judge), RagfactsRecallMetric(judge=judge)])

How an `LLMTestCase`'s fields map to ragfacts's:

    input              -> question
    actual_output      -> answer
    retrieval_context  -> the precision reference, joined by blank lines (`context`, the ideal context, where
                          there is no retrieval context)
    expected_output    -> the recall ground truth, from which the recall method draws the facts to look for

`score` is the faithfulness (share of segments judged consistent) or the recall, successful at `threshold` or
above (default 1.0: a consistent answer, every fact recalled); `reason` is the verdict with each flagged segment
or missing fact and why. An answer that could not be judged sets `error` (deepeval's mark of a metric that
failed), `score` None and `success` False. The judge is ragfacts's: no DeepEval model, key or network is used.
"""

from __future__ import annotations

import asyncio
from abc import ABC, abstractmethod
from typing import Any

from deepeval.errors import MissingTestCaseParamsError
from deepeval.metrics import BaseMetric
from deepeval.test_case import LLMTestCase

from ragfacts.integrations._explain import Judgement
from ragfacts.integrations._judge import Judge

__all__ = ["RagfactsFaithfulnessMetric", "RagfactsRecallMetric"]


class _RagfactsMetric(BaseMetric, ABC):
    metric_name = "ragfacts"

    def __init__(self, threshold: float = 1.0, judge: Judge | None = None, async_mode: bool = True) -> None:
        self.threshold = threshold
        self.judge = judge or Judge()
        self.async_mode = async_mode
        self.include_reason = True
        self.evaluation_model = f"ragfacts: {self.judge.model or 'default model'}"

    def measure(self, test_case: LLMTestCase, *args: Any, **kwargs: Any) -> float | None:
        return self._record(self._judge(test_case))

    async def a_measure(self, test_case: LLMTestCase, *args: Any, **kwargs: Any) -> float | None:
        return self._record(await asyncio.to_thread(self._judge, test_case))

    def is_successful(self) -> bool:
        return bool(self.success)

    @property
    def __name__(self) -> str:
        return self.metric_name

    @abstractmethod
    def _judge(self, test_case: LLMTestCase) -> Judgement:
        """The judgement of one test case: faithfulness or recall."""

    def _record(self, judgement: Judgement) -> float | None:
        self.score = judgement.score
        self.reason = judgement.explanation
        self.error = None if judgement.judged else judgement.explanation.splitlines()[0]
        self.success = judgement.score is not None and judgement.score >= self.threshold
        return self.score


class RagfactsFaithfulnessMetric(_RagfactsMetric):
    """Faithfulness of `actual_output` to the retrieval context, by ragfacts's precision method (lface4rag)."""

    metric_name = "ragfacts faithfulness"

    def _judge(self, test_case: LLMTestCase) -> Judgement:
        chunks = test_case.retrieval_context or test_case.context
        if test_case.actual_output is None or not chunks:
            raise MissingTestCaseParamsError(f"{self.metric_name} needs actual_output and retrieval_context")
        reference = "\n\n".join(chunk if isinstance(chunk, str) else chunk.context for chunk in chunks)
        return self.judge.faithfulness(test_case.actual_output, reference, test_case.input)


class RagfactsRecallMetric(_RagfactsMetric):
    """Recall of the facts of `expected_output` in `actual_output`, by ragfacts's recall method (faaf)."""

    metric_name = "ragfacts recall"

    def _judge(self, test_case: LLMTestCase) -> Judgement:
        if test_case.actual_output is None or not test_case.expected_output:
            raise MissingTestCaseParamsError(f"{self.metric_name} needs actual_output and expected_output")
        return self.judge.recall(
            test_case.actual_output,
            ground_truth=test_case.expected_output,
            question=test_case.input,
            min_recall=self.threshold,
        )
