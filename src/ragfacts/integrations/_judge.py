"""The judge every adapter shares: which model and methods judge, and one answer's judgement with its reasons.

Imports nothing heavy: the pytest plugin loads this module in every pytest session; `ragfacts.check` and
`ragfacts.recall` are imported on the first judgement.
"""

from __future__ import annotations

import asyncio
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field, replace
from typing import TYPE_CHECKING, Any

from ragfacts.integrations._explain import Judgement, explain_precision, explain_recall

if TYPE_CHECKING:
    from ragfacts.api import Results
    from ragfacts.models import ChatModel


@dataclass(frozen=True)
class Judge:
    """A model and the methods it judges with; None and the defaults are ragfacts's own defaults.

    `model` is a spec ("openai:gpt-4o-mini", "local") or a `ChatModel`; `base_url` an OpenAI-compatible endpoint;
    `method`/`recall_method` are method specs ("lface4rag:strategy=paper"); `settings` are those of
    `ragfacts.check` (concurrency, cache, cache_dir, model_options, ...). The async adapters judge rows in worker
    threads, each on an event loop of its own: give them a spec, which builds a model per judgement, not a `ChatModel`
    bound to one loop.
    """

    model: str | ChatModel | None = None
    base_url: str | None = None
    method: str = "lface4rag"
    recall_method: str = "faaf"
    settings: dict[str, Any] = field(default_factory=dict)

    def with_options(self, **changes: Any) -> Judge:
        """This judge with some fields changed (None leaves a field as it is)."""
        return replace(self, **{key: value for key, value in changes.items() if value is not None})

    def faithfulness(self, answer: str, reference: str, question: str | None = None) -> Judgement:
        """Whether `answer` is faithful to `reference`: passed only if the precision method says consistent."""
        import ragfacts

        if not reference.strip():
            raise ValueError("faithfulness needs a reference (the retrieved contexts) to judge the answer against")
        row, result = self._one(ragfacts.check, self.method, reference=reference, answer=answer, question=question)
        return explain_precision(self.method, row, result)

    def recall(
        self,
        answer: str,
        *,
        facts: Sequence[str] | None = None,
        ground_truth: str | None = None,
        question: str | None = None,
        min_recall: float = 1.0,
    ) -> Judgement:
        """Which of `facts` (or of the facts of `ground_truth`) `answer` states: passed if at least `min_recall`."""
        import ragfacts

        if not facts and not (ground_truth and ground_truth.strip()):
            raise ValueError("recall needs facts= or a ground_truth= to generate the facts from")
        given = {"answer": answer, "facts": facts, "ground_truth": ground_truth, "question": question}
        row, result = self._one(ragfacts.recall, self.recall_method, **given)
        return explain_recall(self.recall_method, row, result, min_recall)

    async def afaithfulness(self, answer: str, reference: str, question: str | None = None) -> Judgement:
        """`faithfulness` in a worker thread: the caller's event loop keeps running meanwhile."""
        return await asyncio.to_thread(self.faithfulness, answer, reference, question)

    async def arecall(
        self,
        answer: str,
        *,
        facts: Sequence[str] | None = None,
        ground_truth: str | None = None,
        question: str | None = None,
        min_recall: float = 1.0,
    ) -> Judgement:
        """`recall` in a worker thread: the caller's event loop keeps running meanwhile."""
        return await asyncio.to_thread(
            lambda: self.recall(
                answer, facts=facts, ground_truth=ground_truth, question=question, min_recall=min_recall
            )
        )

    def _one(self, judge_with: Callable[..., Results], method: str, **given: Any) -> tuple[dict[str, Any], Any]:
        """The row and the method's result of one answer judged by `judge_with` (ragfacts.check or ragfacts.recall)."""
        results = judge_with(model=self.model, method=method, settings=self._settings(), **given)
        (row,) = results.rows
        (result,) = results.details[0].values()
        return row, result

    def _settings(self) -> dict[str, Any]:
        return {**self.settings, "base_url": self.base_url} if self.base_url else dict(self.settings)


_session_judge: list[Judge] = []  # at most one: the judge the pytest plugin built from this session's options


def default_judge() -> Judge:
    """The judge `ragfacts.testing`'s assertions use without `judge=`: the pytest session's, else the defaults."""
    return _session_judge[0] if _session_judge else Judge()


def set_default_judge(judge: Judge | None) -> None:
    """Make `judge` the default of the assertions (None: back to the defaults); the pytest plugin calls this."""
    _session_judge[:] = [judge] if judge is not None else []
