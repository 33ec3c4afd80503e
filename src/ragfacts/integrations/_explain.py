"""A judgement from one answer's row and result: passed, score, and the text a person reads when it fails.

The text names the verdict, every flagged segment in full with its error types and the judge's reasons, and
every failed call; a judgement that could not be made says so in its first line.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import TYPE_CHECKING, Any, Literal

if TYPE_CHECKING:  # the pytest plugin loads this module in every session: nothing heavy at import
    from ragfacts.methods.view import ResultView

_DECIDED = ("consistent", "inconsistent", "uncertain")  # "uncertain": a decided abstention, not a failure


@dataclass(frozen=True)
class Judgement:
    """One answer judged: whether it passed, its score, its label and a text saying why, for a person.

    `judged` is False when no judgement could be made (a model call failed, a reply could not be read, nothing in
    the answer could be checked): then `passed` is False and `score` is None, never a silent pass or a zero.
    """

    kind: Literal["faithfulness", "recall"]
    passed: bool
    judged: bool
    score: float | None
    label: str  # precision: consistent, inconsistent, uncertain, unscored; recall: recalled, missing, unscored
    explanation: str
    result: Any = None  # the method's full result: CheckResult, RecallResult, ...


def explain_precision(method: str, row: dict[str, Any], result: Any) -> Judgement:
    """The faithfulness judgement of one answer; it passes only when the method's label is "consistent"."""
    label = str(row.get("label") or "unscored")
    judged = label in _DECIDED
    score = row.get("faithfulness") if judged else None
    if not judged:
        head = f"ragfacts ({method}) could not judge this answer (UNSCORED): no judgement was made, so it fails"
    elif label == "uncertain":
        head = f"ragfacts ({method}): UNCERTAIN: the judge abstained (its probability is in the abstain band)"
    else:
        head = f"ragfacts ({method}): {label.upper()}" + (f", faithfulness {score:.2f}" if score is not None else "")
    lines = [head, *_precision_lines(_view(result))]
    if not hasattr(result, "view") and row.get("failures"):
        lines.append(f"failed calls: {row['failures']}")
    return Judgement("faithfulness", label == "consistent", judged, score, label, "\n".join(lines), result)


def _precision_lines(view: ResultView | None) -> list[str]:
    if view is None:
        return []
    lines = [f"reason: {view.reason}"] if view.reason else []
    if view.decision:
        lines.append(f"judged: {view.decision}")
    for number, unit in enumerate(view.units, start=1):
        if unit.verdict == "supported":
            continue
        if view.unit_name == "problem":
            lines.append(f"  problem: {unit.text}")
            continue
        label = {"unsupported": "inconsistent"}.get(unit.verdict, unit.verdict)
        lines.append(f'flagged {view.unit_name} #{number} ({label}): "{unit.text}"')
        if unit.error_types:
            from ragfacts.typology import named  # here, not at import: the pytest plugin loads this module

            lines.append(f"  error types: {', '.join(named(code) for code in unit.error_types)}")
        for explanation in unit.explanations or ([unit.explanation] if unit.explanation else []):
            lines.append("  " + explanation.replace("\n", "\n    "))
        if unit.note:
            lines.append(f"  note: {unit.note}")
    return lines + [f"failed call: {failure}" for failure in view.failures]


def explain_recall(method: str, row: dict[str, Any], result: Any, min_recall: float) -> Judgement:
    """The recall judgement of one answer; it passes when every fact was judged and recall >= `min_recall`."""
    recall = row.get("recall")
    judged = bool(row.get("complete")) and recall is not None
    passed = judged and recall is not None and recall >= min_recall
    label = "recalled" if passed else "missing" if judged else "unscored"
    if not judged:
        head = f"ragfacts ({method}) could not judge recall (UNSCORED): no judgement was made, so it fails"
    else:
        required = f"below the {min_recall:.2f} required" if not passed else f"at least the {min_recall:.2f} required"
        head = f"ragfacts ({method}): recall {recall:.2f}, {required}"
    lines = [head]
    view = _view(result)
    if view is not None:
        if view.reason:
            lines.append("no facts to check: the ground truth gave none" if view.reason == "no facts" else view.reason)
        for number, unit in enumerate(view.units, start=1):
            if unit.verdict == "supported":
                continue
            if unit.verdict == "unscored":
                lines.append(f'not judged: fact {number}: "{unit.text}" (unscored: {unit.explanation})')
            else:
                said = f" (the judge said {unit.said})" if unit.said is not None else ""
                lines.append(f'not recalled: fact {number}: "{unit.text}"{said}')
        lines += [f"failed call: {failure}" for failure in view.failures if failure != view.reason]
    elif row.get("failures"):
        lines.append(f"failed calls: {row['failures']}")
    return Judgement("recall", passed, judged, recall if judged else None, label, "\n".join(lines), result)


def _view(result: Any) -> ResultView | None:
    """The result's own view, where its type gives one."""
    return result.view() if hasattr(result, "view") else None
