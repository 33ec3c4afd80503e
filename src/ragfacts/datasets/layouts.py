"""Known dataset layouts, and `--map`: which column of a row becomes which field of an item.

A layout is recognised from the first row's columns (names compared case-insensitively) and announced,
so a file is never silently read the wrong way round:

| layout | recognised by | note |
|---|---|---|
| wikievalfacts | gt_facts, human_evaluated_facts_* | three items per row (answer types); given facts, human labels |
| wikieval | question, answer, ungrounded_answer, poor_answer | three items per row; facts come from `answer` |
| face4rag | question, ref, answer, id | the official L-Face4RAG input CSV |
| ragas-v0.2 | user_input or retrieved_contexts | RAGAS's `reference` is the GROUND TRUTH, not the context |
| ragas-v0.1 | question, answer, contexts | `ground_truth(s)` is the ground truth |
| deepeval | actual_output | input, actual_output, retrieval_context (else context), expected_output |
| llamaindex | query, reference_contexts or reference_answer | LlamaIndex's labelled RAG dataset (with a `response`) |
| generic | anything else | answer; reference (or ref, context, contexts); question; ground_truth; facts; id; label |

`mapping` (`--map field=column,...`) overrides the layout for the fields it names. A list of contexts
becomes one reference with its contexts numbered [1], [2], ...
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any

from ragfacts.datasets.reader import DatasetError
from ragfacts.datasets.wikieval import (
    ANSWER_TYPES,
    LABEL_COLUMNS,
    align_labels,
    as_label,
    literal_value,
    parse_fact_list,
    parse_label_dict,
    strip_prefix,
)

FIELDS = (
    "id",
    "question",
    "answer",
    "reference",
    "ground_truth",
    "facts",
    "label",
    "error_type",
    "source_model",
    "answer_type",
    "fact_labels",
)
# Likely names, e.g. for the Face4RAG benchmark CSVs, whose columns are not documented; --map names others.
GOLD_LABEL_COLUMNS = ("label", "gold_label", "fce_label", "is_consistent", "consistent", "factual_consistency", "标签")
_GENERIC: dict[str, tuple[str, ...]] = {
    "id": ("id", "unique_id", "_id", "sample_id", "qid"),
    "question": ("question", "query", "user_input"),
    "answer": ("answer", "response"),
    "reference": ("reference", "ref", "context", "contexts", "retrieved_contexts", "documents", "passage"),
    "ground_truth": ("ground_truth", "ground_truths", "expected_answer", "gold_answer", "expected_output"),
    "facts": ("facts",),
    "label": GOLD_LABEL_COLUMNS,
    "error_type": ("error_type", "error", "type", "错误类型"),
    "source_model": ("source_model", "model", "llm", "generator", "模型"),
    "answer_type": ("answer_type",),
    "fact_labels": ("fact_labels", "labels"),
}
_LABELS = {
    "consistent": "consistent",
    "1": "consistent",
    "true": "consistent",
    "faithful": "consistent",
    "inconsistent": "inconsistent",
    "0": "inconsistent",
    "false": "inconsistent",
    "unfaithful": "inconsistent",
    "hallucinated": "inconsistent",
    "一致": "consistent",
    "不一致": "inconsistent",
}


@dataclass(frozen=True)
class Layout:
    """How a known layout's columns map to item fields; `per_answer` expands one row into several items."""

    name: str
    title: str
    detect: Callable[[set[str]], bool]
    columns: dict[str, tuple[str, ...]]
    note: str = ""
    per_answer: tuple[str, ...] = ()  # answer columns, one item each (WikiEval)
    id_is_unique: bool = True  # False when the id column may repeat (WikiEval's `source`): repeats get ~2, ~3
    extra: dict[str, Any] = field(default_factory=dict)


LAYOUTS = (
    Layout(
        "wikievalfacts",
        "WikiEvalFacts (FaaF paper): given facts with human labels, 3 answer types per row",
        lambda cols: "gt_facts" in cols and LABEL_COLUMNS["answer"] in cols,
        {"id": ("unique_id",), "question": ("question",), "reference": ("context_v1",), "facts": ("gt_facts",)},
        per_answer=ANSWER_TYPES,
    ),
    Layout(
        "wikieval",
        "WikiEval: facts generated from `answer`, checked in answer / ungrounded_answer / poor_answer",
        lambda cols: {"question", "answer", "ungrounded_answer", "poor_answer"} <= cols,
        {
            "id": ("id", "unique_id", "source"),
            "question": ("question",),
            "ground_truth": ("answer",),
            "reference": ("context_v1",),
        },
        per_answer=ANSWER_TYPES,
        id_is_unique=False,
    ),
    Layout(
        "face4rag",
        "the official Face4RAG input CSV",
        lambda cols: {"question", "ref", "answer", "id"} <= cols,
        {**_GENERIC, "reference": ("ref",)},
    ),
    Layout(
        "ragas-v0.2",
        "RAGAS v0.2 (user_input, response, retrieved_contexts, reference)",
        lambda cols: bool({"user_input", "retrieved_contexts"} & cols),
        {
            **_GENERIC,
            "question": ("user_input", "question"),
            "answer": ("response", "answer"),
            "reference": ("retrieved_contexts", "contexts"),
            "ground_truth": ("reference", "ground_truth"),
        },
        note="RAGAS's `reference` is the ground truth, not the context",
    ),
    Layout(
        "ragas-v0.1",
        "RAGAS v0.1 (question, answer, contexts, ground_truth)",
        lambda cols: {"question", "answer", "contexts"} <= cols,
        {**_GENERIC, "reference": ("contexts",), "ground_truth": ("ground_truth", "ground_truths")},
    ),
    Layout(
        "deepeval",
        "DeepEval test cases (input, actual_output, retrieval_context, expected_output)",
        lambda cols: bool({"actual_output", "actualoutput"} & cols),
        {
            **_GENERIC,
            "question": ("input",),
            "answer": ("actual_output", "actualoutput"),
            "reference": ("retrieval_context", "retrievalcontext", "context"),
            "ground_truth": ("expected_output", "expectedoutput"),
        },
        note="the retrieval_context is the reference; the expected_output is the ground truth",
    ),
    Layout(
        "llamaindex",
        "LlamaIndex labelled RAG dataset (query, reference_contexts, reference_answer, response)",
        lambda cols: "query" in cols and bool({"reference_contexts", "reference_answer"} & cols),
        {
            **_GENERIC,
            "question": ("query",),
            "answer": ("response", "answer"),
            "reference": ("contexts", "reference_contexts"),
            "ground_truth": ("reference_answer",),
        },
        note="the retrieved `contexts` are the reference where given, else the reference_contexts",
    ),
    Layout("generic", "generic rows", lambda cols: True, _GENERIC),
)

# What a column's name suggests it holds, to propose the --map line that would read a file (lower-case parts).
_NAME_HINTS: dict[str, tuple[str, ...]] = {
    "answer": ("answer", "output", "response", "generat", "prediction", "completion", "reply"),
    "reference": ("context", "retriev", "passage", "doc", "source", "evidence", "knowledge", "chunk"),
    "ground_truth": ("expected", "gold", "truth", "reference", "target", "ideal"),
    "question": ("question", "query", "input", "prompt", "instruction"),
}
FIELD_NEEDS = {"answer": "answer", "reference": "reference (precision)", "ground_truth": "ground_truth (recall)"}


def map_hint(plan: ColumnPlan | None, columns: list[str], missing: list[str]) -> str:
    """The --map line that would read the `missing` fields from the columns not read yet, guessed from their
    names; a placeholder where no column's name suggests the field."""
    used = set(plan.sources.values()) if plan is not None else set()
    free = [column for column in columns if column not in used]
    pairs = []
    for name in missing:
        guess = next((c for c in free if any(part in c.lower() for part in _NAME_HINTS.get(name, ()))), None)
        if guess is not None:
            free.remove(guess)
        pairs.append(f"{name}={guess or 'COLUMN'}")
    return f"--map {','.join(pairs)}"


@dataclass(frozen=True)
class ColumnPlan:
    """A layout applied to a file's columns: which column each field is read from."""

    layout: Layout
    sources: dict[str, str]  # field -> column as written in the file

    def describe(self) -> str:
        """One line saying how the file is read, e.g. for `ragfacts evaluate`'s first output."""
        fields = ", ".join(f"{name} ← {column}" for name, column in self.sources.items() if name != "id")
        per_answer = f"; one item per {' / '.join(self.layout.per_answer)}" if self.layout.per_answer else ""
        note = f" ({self.layout.note})" if self.layout.note else ""
        ids = f"id ← {self.sources['id']}" if "id" in self.sources else "ids from each row's content"
        return f"{self.layout.name} layout: {fields}{per_answer}; {ids}{note}"


def plan_columns(columns: list[str], mapping: dict[str, str] | None, where: str) -> ColumnPlan:
    """Choose the layout for these columns and resolve `mapping`; raises DatasetError naming the columns."""
    by_lower = {column.strip().lower(): column for column in columns}
    lowered = set(by_lower)
    layout = next(layout for layout in LAYOUTS if layout.detect(lowered))
    sources: dict[str, str] = {}
    for name, candidates in layout.columns.items():
        found = next((by_lower[c] for c in candidates if c in by_lower), None)
        if found is not None and found not in sources.values():
            sources[name] = found
    for name, column in (mapping or {}).items():
        if name not in FIELDS:
            raise DatasetError(f"--map: unknown field {name!r}; fields: {', '.join(FIELDS)}")
        if column.strip().lower() not in by_lower:
            raise DatasetError(
                f"--map {name}={column}: {where} has no column {column!r}; columns: {', '.join(columns)}"
            )
        sources = {k: v for k, v in sources.items() if v != by_lower[column.strip().lower()]}
        sources[name] = by_lower[column.strip().lower()]
    plan = ColumnPlan(layout, dict(sorted(sources.items(), key=lambda kv: FIELDS.index(kv[0]))))
    if "answer" not in sources and not layout.per_answer:
        missing = ["answer", *(f for f in ("reference", "ground_truth") if f not in sources)]
        if "facts" in sources:
            missing = [f for f in missing if f != "ground_truth"]
        looked = "; ".join(f"{FIELD_NEEDS[f]}: {', '.join(layout.columns[f])}" for f in missing)
        raise DatasetError(
            f"{where}: no column found for {', '.join(FIELD_NEEDS[f] for f in missing)} (looked for {looked}); "
            f"columns: {', '.join(columns)}. Read them with: {map_hint(plan, columns, missing)}"
        )
    return plan


def row_fields(plan: ColumnPlan, row: dict[str, Any], where: str) -> list[dict[str, Any]]:
    """The item fields of one row (several for layouts with one item per answer); raises DatasetError."""
    values = {name: _convert(name, row.get(column), f"{where} ({column})") for name, column in plan.sources.items()}
    known = set(plan.sources.values()) | set(plan.layout.per_answer) | set(LABEL_COLUMNS.values())
    meta = {key: value for key, value in row.items() if key not in known and value not in (None, "")}
    base = {name: value for name, value in values.items() if value is not None}
    if not plan.layout.per_answer:
        return [{**base, "meta": meta}]
    # WikiEval keeps "Question: " / "Answer: " in front of some texts; the model should not see them.
    for name, kind in (("question", "question"), ("ground_truth", "answer")):
        if name in base:
            base[name] = strip_prefix(base[name], kind)
    items = []
    for kind in plan.layout.per_answer:
        answer = strip_prefix(_text(row.get(kind), f"{where} ({kind})") or "", "answer")
        fields = {**base, "answer": answer, "answer_type": kind}
        if plan.layout.name == "wikievalfacts":
            labels = parse_label_dict(str(row.get(LABEL_COLUMNS[kind], "")), f"{where} ({LABEL_COLUMNS[kind]})")
            fields["fact_labels"] = align_labels(base.get("facts") or [], labels)
        items.append({**fields, "meta": meta})
    return items


def _convert(name: str, value: Any, place: str) -> Any:
    if value is None or (isinstance(value, str) and not value.strip()):
        return None
    if name == "reference":
        return _reference(_listed(value), place)
    if name == "ground_truth":
        listed = _listed(value)
        if isinstance(listed, list):
            return "\n".join(text for text in (_text(v, place) for v in listed) if text)
        return _text(value, place)
    if name == "facts":
        listed = _listed(value)
        if isinstance(listed, list):
            return [str(v).strip() for v in listed if str(v).strip()]
        return parse_fact_list(str(value), place)
    if name == "label":
        label = _LABELS.get(str(value).strip().lower())
        if label is None:
            raise DatasetError(f"{place}: label {value!r} is not consistent/inconsistent (or 1/0, true/false)")
        return label
    if name == "fact_labels":
        listed = _listed(value)
        if not isinstance(listed, list):
            raise DatasetError(f"{place}: fact labels must be a list of true/false, one per fact")
        return [as_label(v) if v is not None else None for v in listed]
    return _text(value, place)


def _listed(value: Any) -> Any:
    """A list given as a list, or as the text of one (a CSV cell holding "['a', 'b']"); else the value."""
    if isinstance(value, str) and value.strip().startswith("[") and value.strip().endswith("]"):
        try:
            parsed = literal_value(value.strip(), "")
        except DatasetError:
            return value
        return parsed if isinstance(parsed, list) else value
    return value


def _reference(value: Any, place: str) -> str | None:
    if not isinstance(value, list):
        return _text(value, place)
    contexts = [text for text in (_text(v, place) for v in value) if text and text.strip()]
    if len(contexts) <= 1:
        return contexts[0] if contexts else None
    return "\n\n".join(f"[{number}] {text.strip()}" for number, text in enumerate(contexts, start=1))


def _text(value: Any, place: str) -> str | None:
    if value is None:
        return None
    if isinstance(value, str):
        return value
    if isinstance(value, (int, float, bool)):
        return str(value)
    if isinstance(value, list) and all(isinstance(v, str) for v in value):
        return "\n\n".join(value)
    raise DatasetError(f"{place}: expected text, got {type(value).__name__}")
