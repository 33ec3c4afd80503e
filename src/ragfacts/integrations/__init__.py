"""ragfacts as a metric where RAG teams already measure: pytest, RAGAS, LlamaIndex and DeepEval.

Each adapter is an optional extra built on the public API (`ragfacts.check`, `ragfacts.recall`) and shares one
`Judge` (model, methods, settings) whose `Judgement` says passed, score and why:

    from ragfacts.integrations import Judge
    judge = Judge(model="openai:gpt-4o-mini")
    judge.faithfulness(answer, reference).explanation

    ragfacts.testing.assert_faithful / assert_recalls       pip install 'ragfacts[pytest]'
    ragfacts.integrations.ragas: RagfactsFaithfulness, RagfactsRecall          'ragfacts[ragas]'
    ragfacts.integrations.llamaindex: RagfactsFaithfulnessEvaluator, ...       'ragfacts[llamaindex]'
    ragfacts.integrations.deepeval: RagfactsFaithfulnessMetric, ...            'ragfacts[deepeval]'
"""

from __future__ import annotations

from ragfacts.integrations._explain import Judgement
from ragfacts.integrations._judge import Judge

__all__ = ["Judge", "Judgement"]
