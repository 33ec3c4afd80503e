"""The input of every method: one answer, what it is judged against, and any gold labels.

Datasets produce items and methods judge them; this module imports nothing above it, so datasets know no
method and methods know no dataset format.
"""

from __future__ import annotations

from typing import Any, Literal

from pydantic import BaseModel, ConfigDict, Field

from ragfacts.hashing import digest

GoldLabel = Literal["consistent", "inconsistent"]

# What a method may read: an edit to any of these makes earlier results of the row stale.
JUDGED_FIELDS = ("question", "answer", "reference", "ground_truth", "facts")


class Item(BaseModel):
    """One answer to judge.

    `reference` is what the answer must be faithful to (the retrieved context: precision); `ground_truth`
    is the expected answer, whose facts the answer should contain (recall), unless `facts` are given.
    `label`, `error_type`, `source_model`, `answer_type` and `fact_labels` are gold annotations for
    benchmarks; methods never see them.
    """

    model_config = ConfigDict(frozen=True)

    id: str | None = None
    answer: str
    question: str | None = None
    reference: str | None = None
    ground_truth: str | None = None
    facts: list[str] | None = None
    label: GoldLabel | None = None
    error_type: str | None = None
    source_model: str | None = None
    answer_type: str | None = None  # e.g. WikiEval's answer / ungrounded_answer / poor_answer
    fact_labels: list[bool | None] | None = None  # human verdict per given fact
    meta: dict[str, Any] = Field(default_factory=dict)  # the dataset's other columns

    @property
    def key(self) -> str:
        """The id a run files the item's results under: items of a dataset always have one; an item built in code
        must be given one before it is run."""
        if self.id is None:
            raise ValueError("an item without an id cannot be run; give it an id")
        return self.id

    def content_hash(self) -> str:
        """A hash of what a method may read (not the id, gold labels or other columns)."""
        return digest({name: getattr(self, name) for name in JUDGED_FIELDS})
