"""ragfacts's faithfulness and recall as RAGAS metrics, for `ragas.evaluate(dataset, metrics=[...])`.

    from ragas import EvaluationDataset, evaluate
    from ragfacts.integrations import Judge
    from ragfacts.integrations.ragas import RagfactsFaithfulness, RagfactsRecall

    judge = Judge(model="openai:gpt-4o-mini")
    evaluate(dataset, metrics=[RagfactsFaithfulness(judge=judge), RagfactsRecall(judge=judge)])

How a RAGAS sample's fields map to ragfacts's:

    user_input          -> question (both metrics; optional)
    response            -> answer (both metrics)
    retrieved_contexts  -> the precision reference: the contexts joined by blank lines, so "faithful" means
                           supported by what the RAG system retrieved (RAGAS's own faithfulness reads the same)
    reference           -> the recall ground truth, from which the recall method draws the facts to look for

Scores: faithfulness is the share of the answer's segments judged consistent (1.0 only for a consistent answer);
recall the share of facts the answer states. An answer that could not be judged (a failed call, an unreadable
reply) scores NaN, RAGAS's mark for a failed row, never 0 or 1. Neither metric needs a RAGAS LLM or embeddings:
they call ragfacts's own judge, in a worker thread so that RAGAS's event loop keeps running.
"""

from __future__ import annotations

import math
from abc import abstractmethod
from dataclasses import dataclass, field
from typing import Any

from ragas.metrics.base import MetricOutputType, MetricType, SingleTurnMetric
from ragas.run_config import RunConfig

from ragfacts.integrations._explain import Judgement
from ragfacts.integrations._judge import Judge

__all__ = ["RagfactsFaithfulness", "RagfactsRecall"]


@dataclass
class _RagfactsMetric(SingleTurnMetric):
    judge: Judge = field(default_factory=Judge)
    output_type: MetricOutputType = MetricOutputType.CONTINUOUS

    def init(self, run_config: RunConfig) -> None:
        """Nothing to set up: the judge is ragfacts's, not a RAGAS LLM."""

    async def _single_turn_ascore(self, sample: Any, callbacks: Any) -> float:
        judgement = await self._judge(sample)
        return judgement.score if judgement.score is not None else math.nan

    @abstractmethod
    async def _judge(self, sample: Any) -> Judgement:
        """The judgement of one sample: faithfulness or recall."""


@dataclass
class RagfactsFaithfulness(_RagfactsMetric):
    """Faithfulness of `response` to the `retrieved_contexts`, by ragfacts's precision method (lface4rag)."""

    name: str = "ragfacts_faithfulness"
    _required_columns: dict[MetricType, set[str]] = field(
        default_factory=lambda: {MetricType.SINGLE_TURN: {"user_input:optional", "response", "retrieved_contexts"}}
    )

    async def _judge(self, sample: Any) -> Judgement:
        reference = "\n\n".join(sample.retrieved_contexts or [])
        return await self.judge.afaithfulness(sample.response or "", reference, sample.user_input)


@dataclass
class RagfactsRecall(_RagfactsMetric):
    """Recall of the facts of `reference` (the ground-truth answer) in `response`, by ragfacts's recall method."""

    name: str = "ragfacts_recall"
    _required_columns: dict[MetricType, set[str]] = field(
        default_factory=lambda: {MetricType.SINGLE_TURN: {"user_input:optional", "response", "reference"}}
    )

    async def _judge(self, sample: Any) -> Judgement:
        return await self.judge.arecall(
            sample.response or "", ground_truth=sample.reference, question=sample.user_input
        )
