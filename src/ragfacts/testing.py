"""Assertions for a RAG system's own test suite: is an answer faithful to its reference, does it recall the facts?

    from ragfacts.testing import assert_faithful, assert_recalls

    def test_the_bot_answers_from_its_sources(ragfacts_judge):
        answer, contexts = my_rag("Why did the Nile flood?")
        assert_faithful(answer, "\\n\\n".join(contexts), question="Why did the Nile flood?", judge=ragfacts_judge)
        assert_recalls(answer, facts=["The Ethiopian rains swell the Nile."], judge=ragfacts_judge)

A failure raises AssertionError whose message is the verdict, each flagged segment in full with its error types
and the judge's reasons. A judgement that could not be made (a failed call, an unreadable reply) fails too, and
says so. Without `judge=`, the judge of the pytest plugin's options (--ragfacts-model, --ragfacts-base-url,
--ragfacts-method, --ragfacts-recall-method, or the `ragfacts_*` ini keys) is used, else ragfacts's defaults.
"""

from __future__ import annotations

from collections.abc import Sequence

from ragfacts.integrations._explain import Judgement
from ragfacts.integrations._judge import Judge, default_judge, set_default_judge

__all__ = ["Judge", "Judgement", "assert_faithful", "assert_recalls", "default_judge", "set_default_judge"]


def assert_faithful(answer: str, reference: str, *, question: str | None = None, judge: Judge | None = None) -> None:
    """Fail unless the judge finds `answer` consistent with `reference` (the retrieved contexts, joined).

    Raises AssertionError with the verdict, the flagged segments, their error types and the reasons.
    """
    __tracebackhide__ = True  # pytest shows the caller's line, not this one
    judgement = (judge or default_judge()).faithfulness(answer, reference, question)
    if not judgement.passed:
        raise AssertionError(judgement.explanation)


def assert_recalls(
    answer: str,
    *,
    facts: Sequence[str] | None = None,
    ground_truth: str | None = None,
    question: str | None = None,
    min_recall: float = 1.0,
    judge: Judge | None = None,
) -> None:
    """Fail unless `answer` states at least `min_recall` of `facts` (or of the facts the judge draws from
    `ground_truth`), every fact judged.

    Raises AssertionError with the recall, each fact not recalled or not judged, and any failed call.
    """
    __tracebackhide__ = True
    judgement = (judge or default_judge()).recall(
        answer, facts=facts, ground_truth=ground_truth, question=question, min_recall=min_recall
    )
    if not judgement.passed:
        raise AssertionError(judgement.explanation)
