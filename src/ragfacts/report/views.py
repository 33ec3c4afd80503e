"""What a report shows of one result: the method's own view (`ResultView`), as the report's page reads it.

Precision results become segments (or claims, or the problems of one judgement) with verdicts, error types,
explanations and the reference quotes with how they were found; recall results become facts with verdicts and
citations. Raw model replies, schemas and per-call provenance stay in results.jsonl.
"""

from __future__ import annotations

from typing import Any

from ragfacts.methods.base import Outcome
from ragfacts.methods.view import ResultView, UnitView, view_of

_SEGMENT_LABELS = {"supported": "consistent", "unsupported": "inconsistent"}  # a segment keeps its own words
_FACT_VERDICTS = {"supported": "True", "unsupported": "False"}


def result_view(method: str, result: dict[str, Any], outcome: dict[str, Any]) -> dict[str, Any]:
    """The page's view of one stored result of `method` with its outcome."""
    view = view_of(method, result, Outcome.model_validate(outcome))
    shown = _shown(view, outcome)
    if view.first is not None and view.first.probability is not None:  # a cascade: the first judge's probability
        shown["probability"], shown["calibrated"] = view.first.probability, view.first.calibrated
    if view.first is not None:
        said = f" (P(faithful) {view.first.probability:.2f})" if view.first.probability is not None else ""
        second = (view.decided_by or "").removeprefix("escalated to ") or "the second judge"
        note = f"the first judge left it {view.first.label}{said}; {second} decided"
        shown["problems"] = [note, *shown.get("problems", [])]
    return shown


def _shown(view: ResultView, outcome: dict[str, Any]) -> dict[str, Any]:
    shown: dict[str, Any] = {
        "label": outcome.get("label"),
        "score": outcome.get("score"),
        "failures": outcome.get("failures", 0),
        "complete": outcome.get("complete", True),
        "reason": view.reason,
        "failed_calls": view.failures,
    }
    if view.probability is not None:  # the probability strategies: P(faithful) on the chip
        shown["probability"], shown["calibrated"] = view.probability, view.calibrated
    problems = []
    explanation = (view.decision or "").split(" — ", 1)[-1]  # how the probability decided, without the verdict
    if view.probability is not None and explanation and explanation not in (view.reason or ""):
        problems.append(f"whole answer: {explanation}")
    if view.unit_name == "segment":
        shown["segments"] = [_segment(unit) for unit in view.units]
        shown["error_types"] = view.error_types
    elif view.unit_name == "problem":
        problems += [unit.text for unit in view.units]
    elif view.unit_name == "claim":
        shown["claims"] = [{"text": u.text, "verdict": _claim(u), "reason": u.explanation} for u in view.units]
    elif view.unit_name == "fact":
        shown["facts"] = [_fact(unit) for unit in view.units]
    if problems or view.unit_name in ("segment", "problem"):
        shown["problems"] = problems
    return shown


def _segment(unit: UnitView) -> dict[str, Any]:
    return {
        "text": unit.text,
        "label": _SEGMENT_LABELS.get(unit.verdict, unit.verdict),
        "error_types": unit.error_types,
        "probability": unit.probability,
        "explanations": ([unit.note] if unit.note else []) + unit.explanations,
        "quotes": [{"text": quote.text, "match": quote.match} for quote in unit.quotes],
    }


def _claim(unit: UnitView) -> str:
    return unit.said or {"supported": "supported", "unsupported": "unsupported"}.get(unit.verdict, "unscored")


def _fact(unit: UnitView) -> dict[str, Any]:
    return {
        "fact": unit.text,
        "verdict": _FACT_VERDICTS.get(unit.verdict, unit.said or "unscored"),
        "raw": unit.said,
        "citation": unit.citation,
        "citation_found": bool(unit.citation_found),
    }
