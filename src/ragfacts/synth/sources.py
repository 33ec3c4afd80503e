"""The rows synthesis starts from: a reference, maybe a question, and a faithful answer or none.

Read like every dataset (same files, layouts, `--map` and ids), except that the answer is optional: a row
without one gets a faithful answer written by the model. A row must have a reference, and a row labelled
inconsistent is refused, since its answer cannot be the faithful one the errors are injected into.
"""

from __future__ import annotations

from collections.abc import Iterator
from typing import Any

from pydantic import ValidationError

from ragfacts.datasets.dataset import CONTENT_ID_LENGTH, Dataset
from ragfacts.datasets.layouts import ColumnPlan, plan_columns, row_fields
from ragfacts.datasets.reader import DatasetError
from ragfacts.items import Item

_ABSENT = "\x00no answer column"  # a column name no file has: the answer field is planned, then dropped


class SourceDataset(Dataset):
    """Source rows for synthesis; `items()` gives one item per row, its answer "" when the model must write one."""

    def describe(self) -> str:
        assert self.plan is not None
        written = "" if "answer" in self.plan.sources else "; no answer column: the model writes each faithful answer"
        return self.plan.describe() + written

    def items(self) -> Iterator[Item]:
        assert self.plan is not None
        seen: dict[str, int] = {}
        for where, row in self._rows():
            place = f"{self.name}: {where}"
            fields = row_fields(self.plan, row, place)[0]
            item = _source_item(fields, place)
            given = fields.get("id")
            base = str(given).strip() if given not in (None, "") else item.content_hash()[:CONTENT_ID_LENGTH]
            count = seen.get(base, 0)
            seen[base] = count + 1
            if count and given not in (None, ""):
                raise DatasetError(f"{self.name}: {where} repeats the id {base!r}; ids must be unique")
            item = item.model_copy(update={"id": f"{base}~{count + 1}" if count else base})
            if self._only is None or item.id in self._only:
                yield item

    def _scan(self) -> None:
        columns: dict[str, None] = {}
        for _, row in self._rows():
            columns.update(dict.fromkeys(row))
            self.rows += 1
        if not columns:
            raise DatasetError(f"{self.name}: no rows")
        self.plan = _plan(list(columns), self.mapping, self.name)
        self._count()


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
