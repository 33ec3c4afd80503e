"""A dataset: rows read through one layout into items, validated in full before anything runs, then streamed.

A run reads its items several times (planning, judging, reading the results back, the summaries and tables). A
file of up to `KEEP_BYTES` keeps its items in memory after the first full read, so the later passes do not parse
it again; a larger file is read from disk on every pass, so memory stays flat however large the data.

Every command that reads many rows opens its data here, so `check`, `recall`, `evaluate` and `bench` read
the same files the same way and give the same row the same id. A row without an id gets one from its
content (a hash of question, answer, reference, ground truth and facts), never from its position, so
inserting a row does not shift the ids of the others.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable, Iterator
from pathlib import Path
from typing import Any

from pydantic import ValidationError

from ragfacts.datasets.layouts import ColumnPlan, plan_columns, row_fields
from ragfacts.datasets.reader import DatasetError, Row, check_readable, read_rows
from ragfacts.items import Item

CONTENT_ID_LENGTH = 12
KEEP_BYTES = 32 * 1024 * 1024  # a file at most this large keeps its items in memory once read


class Dataset:
    """Items from a file or from rows in memory; `items()` streams them and may be called again."""

    def __init__(
        self,
        name: str,
        rows: Callable[[], Iterator[Row]],
        *,
        mapping: dict[str, str] | None = None,
        path: Path | None = None,
        sha256: str | None = None,
        keep: bool = True,
    ) -> None:
        self.name = name
        self.path = path
        self.sha256 = sha256
        self.mapping = dict(mapping or {})
        self.selection: dict[str, Any] | None = None  # how a subset was chosen (e.g. a stratified sample)
        self._only: set[str] | None = None
        self._rows = rows
        self._keep = keep
        self._kept: list[Item] | None = None
        self.plan: ColumnPlan | None = None
        self.columns: list[str] = []  # every column of the file, in first-seen order
        self.rows = 0
        self.count = 0
        self.with_reference = 0
        self.with_recall_target = 0  # items with facts or a ground truth
        self.labelled = 0
        self._scan()

    @classmethod
    def open(cls, path: str | Path, mapping: dict[str, str] | None = None) -> Dataset:
        """Read and validate a .jsonl, .json or .csv file; raises DatasetError naming the file and row."""
        path = Path(path)
        sha256 = check_readable(path)
        keep = path.stat().st_size <= KEEP_BYTES
        return cls(str(path), lambda: read_rows(path), mapping=mapping, path=path, sha256=sha256, keep=keep)

    @classmethod
    def from_rows(cls, rows: Iterable[dict[str, Any] | Item], mapping: dict[str, str] | None = None) -> Dataset:
        """A dataset of rows in memory: dicts (read like a file's rows) or items."""
        records = [_as_row(row) if isinstance(row, Item) else dict(row) for row in rows]
        return cls("rows", lambda: ((f"row {n}", row) for n, row in enumerate(records, start=1)), mapping=mapping)

    def select(self, ids: set[str], how: dict[str, Any]) -> Dataset:
        """The same dataset restricted to the items with these ids; `how` says how they were chosen."""
        subset = Dataset(
            self.name, self._rows, mapping=self.mapping, path=self.path, sha256=self.sha256, keep=self._keep
        )
        subset._only, subset.selection = set(ids), how
        subset._kept = None if self._kept is None else [item for item in self._kept if item.id in subset._only]
        subset._count()
        return subset

    def describe(self) -> str:
        """How the data is read, in one line."""
        assert self.plan is not None
        return self.plan.describe()

    def items(self) -> Iterator[Item]:
        """Yield the items in file order; the same items, with the same ids, every time."""
        if self._kept is not None:
            yield from self._kept
            return
        kept: list[Item] | None = [] if self._keep else None
        for item in self._read():
            if kept is not None:
                kept.append(item)
            yield item
        self._kept = kept  # only once the whole data was read

    def _read(self) -> Iterator[Item]:
        assert self.plan is not None
        plan = self.plan
        seen: dict[str, int] = {}
        for where, row in self._rows():
            explicit = plan.sources.get("id")
            for fields in row_fields(plan, row, f"{self.name}: {where}"):
                item = self._make_item(fields, f"{self.name}: {where}")
                item = _with_id(item, fields.get("id") if explicit else None, plan, seen, where, self.name)
                if self._only is None or item.id in self._only:
                    yield item

    def _scan(self) -> None:
        # The layout is chosen from the columns of all rows: JSONL rows need not all have the same keys.
        columns: dict[str, None] = {}
        for _, row in self._rows():
            columns.update(dict.fromkeys(row))
            self.rows += 1
        if not columns:
            raise DatasetError(f"{self.name}: no rows")
        self.columns = list(columns)
        self.plan = self._plan_columns(self.columns)
        self._count()

    def _plan_columns(self, columns: list[str]) -> ColumnPlan:
        """How these columns are read (a subclass may relax or narrow the layouts)."""
        return plan_columns(columns, self.mapping, self.name)

    def _make_item(self, fields: dict[str, Any], place: str) -> Item:
        """The item of one row's fields; raises DatasetError naming `place` (a subclass may check other things)."""
        return _item(fields, place)

    def _count(self) -> None:
        self.count = self.with_reference = self.with_recall_target = self.labelled = 0
        for item in self.items():
            self.count += 1
            self.with_reference += bool(item.reference and item.reference.strip())
            self.with_recall_target += bool(item.facts or (item.ground_truth and item.ground_truth.strip()))
            self.labelled += item.label is not None


def _item(fields: dict[str, Any], where: str) -> Item:
    answer = fields.get("answer")
    if not isinstance(answer, str) or not answer.strip():
        raise DatasetError(f"{where}: the answer is empty")
    values = {**fields, "id": None}
    try:
        return Item(**values)
    except ValidationError as error:
        problem = "; ".join(f"{'.'.join(map(str, e['loc']))}: {e['msg']}" for e in error.errors())
        raise DatasetError(f"{where}: {problem}") from error


def _with_id(item: Item, given: Any, plan: ColumnPlan, seen: dict[str, int], where: str, name: str) -> Item:
    """Give the item its id: the row's id, else one from its content; answer types get /TYPE."""
    base = str(given).strip() if given not in (None, "") else ""
    if not base:
        # The answers of one row share the row's id: hash what they have in common.
        shared = item.model_copy(update={"answer": ""}) if plan.layout.per_answer else item
        base = shared.content_hash()[:CONTENT_ID_LENGTH]
    if plan.layout.per_answer:
        base = f"{base}/{item.answer_type}"
    count = seen.get(base, 0)
    seen[base] = count + 1
    if count and given not in (None, "") and plan.layout.id_is_unique:
        raise DatasetError(f"{name}: {where} repeats the id {base!r}; ids must be unique (results are matched by id)")
    return item.model_copy(update={"id": f"{base}~{count + 1}" if count else base})


def _as_row(item: Item) -> dict[str, Any]:
    """An item as a generic row: its fields (those set) and its other columns."""
    fields = item.model_dump(exclude={"meta"}, exclude_none=True)
    return {**item.meta, **fields}
