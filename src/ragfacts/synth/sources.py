"""The rows synthesis starts from: a reference, maybe a question, and a faithful answer or none.

Read like every dataset (same files, layouts, `--map` and ids), except that the answer is optional: a row
without one gets a faithful answer written by the model. A row must have a reference, and a row labelled
inconsistent is refused, since its answer cannot be the faithful one the errors are injected into.
"""

from __future__ import annotations

from typing import Any

from pydantic import ValidationError

from ragfacts.datasets.dataset import Dataset
from ragfacts.datasets.layouts import ColumnPlan, plan_columns
from ragfacts.datasets.reader import DatasetError
from ragfacts.items import Item

_ABSENT = "\x00no answer column"  # a column name no file has: the answer field is planned, then dropped


class SourceDataset(Dataset):
    """Source rows for synthesis; `items()` gives one item per row, its answer "" when the model must write one."""

    def describe(self) -> str:
        assert self.plan is not None
        written = "" if "answer" in self.plan.sources else "; no answer column: the model writes each faithful answer"
        return self.plan.describe() + written

    def _plan_columns(self, columns: list[str]) -> ColumnPlan:
        return _plan(columns, self.mapping, self.name)

    def _make_item(self, fields: dict[str, Any], place: str) -> Item:
        return _source_item(fields, place)


def _plan(columns: list[str], mapping: dict[str, str], name: str) -> ColumnPlan:
    """The layout of these columns, with the answer column optional."""
    try:
        plan = plan_columns(columns, mapping, name)
    except DatasetError:
        if "answer" in mapping:
            raise
        # No answer column (the only error a second try with one can fix; any other is raised again).
        plan = plan_columns([*columns, _ABSENT], {**mapping, "answer": _ABSENT}, name)
        plan = ColumnPlan(plan.layout, {f: c for f, c in plan.sources.items() if f != "answer"})
    if plan.layout.per_answer:
        raise DatasetError(
            f"{name}: read as {plan.layout.title}, which has several answers per row; synth starts from one faithful "
            "answer (or none) per row: keep the columns you need, e.g. question, reference and answer"
        )
    return plan


def _source_item(fields: dict[str, Any], place: str) -> Item:
    if not (isinstance(fields.get("reference"), str) and fields["reference"].strip()):
        raise DatasetError(f"{place}: no reference; synth makes answers from a reference (name it with --map)")
    if fields.get("label") == "inconsistent":
        raise DatasetError(
            f"{place}: the row is labelled inconsistent; synth injects errors into faithful answers, so give only "
            "rows labelled consistent (or no label)"
        )
    values = {**fields, "id": None, "answer": fields.get("answer") or ""}
    try:
        return Item(**values)
    except ValidationError as error:
        problem = "; ".join(f"{'.'.join(map(str, e['loc']))}: {e['msg']}" for e in error.errors())
        raise DatasetError(f"{place}: {problem}") from error
