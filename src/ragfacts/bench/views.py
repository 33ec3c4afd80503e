"""What a report shows of one result: a compact, display-ready view of any method's result.

Precision results become segments (or claims) with verdicts, error types, explanations and the reference
quotes with whether they were found; recall results become facts with verdicts and citations. Raw model
replies, schemas and per-call provenance stay in results.jsonl; the view keeps what a person reads.
"""

from __future__ import annotations

from typing import Any


def result_view(result: dict[str, Any], outcome: dict[str, Any]) -> dict[str, Any]:
    """The view of one stored result (a method's `model_dump`) with its outcome."""
    if "first_outcome" in result:
        return _cascade(result, outcome)
    view: dict[str, Any] = {
        "label": outcome.get("label"),
        "score": outcome.get("score"),
        "failures": outcome.get("failures", 0),
        "complete": outcome.get("complete", True),
        "reason": result.get("reason"),
    }
    if "segments" in result:
        view["segments"] = [_segment(s) for s in result["segments"]]
        view["error_types"] = result.get("error_types", [])
        holistic = result.get("holistic") or {}
        if holistic:
            view["problems"] = holistic.get("problems", [])
            if holistic.get("probability") is not None:  # the probability strategies: P(faithful) on the chip
                view["probability"] = holistic["probability"]
                view["calibrated"] = bool(holistic.get("calibrated"))
        explanation = holistic.get("explanation")
        # holistic_score's P(Yes) against its threshold; a flagged answer's reason already says it
        if explanation and holistic.get("probability") is not None and explanation not in (view["reason"] or ""):
            view["problems"] = [f"whole answer: {explanation}", *view["problems"]]
    elif "judgement" in result:
        view["problems"] = result["judgement"].get("problems", [])
    elif "claims" in result:
        view["claims"] = [
            {"text": c["text"], "verdict": c.get("verdict") or "unscored", "reason": c.get("reason", "")}
            for c in result["claims"]
        ]
    elif "verification" in result:
        view["facts"] = [_fact(v) for v in result["verification"].get("verdicts", [])]
        generation = result.get("fact_generation") or {}
        if generation.get("failure"):
            view["reason"] = f"fact generation failed: {generation['failure'].get('message', '')}"
    view["failed_calls"] = _failures(result)
    return view


def _cascade(result: dict[str, Any], outcome: dict[str, Any]) -> dict[str, Any]:
    """A cascade's view: the deciding judge's, with the first judge's probability and where it was escalated."""
    second = result.get("second")
    view = result_view(second if second is not None else result["first"], outcome)
    first = result_view(result["first"], result["first_outcome"])
    for key in ("probability", "calibrated"):
        if key in first:
            view[key] = first[key]
    if second is not None:
        said = f" (P(faithful) {first['probability']:.2f})" if first.get("probability") is not None else ""
        note = f"the first judge left it {first.get('label')}{said}; {result['second_model']} decided"
        view["problems"] = [note, *view.get("problems", [])]
    return view


def _segment(segment: dict[str, Any]) -> dict[str, Any]:
    stages = [segment.get(name) for name in ("score", "fact", "logic") if segment.get(name)]
    explanations = [
        f"{stage.get('stage', '')}: {stage['explanation']}"
        for stage in stages
        if stage.get("verdict") == "inconsistent" and stage.get("explanation")
    ]
    quotes: list[dict[str, str]] = []
    for stage in stages:
        for point in stage.get("points", []) or []:
            if point.get("quote"):
                quotes.append({"text": point["quote"]["text"], "match": point["quote"]["match"]})
        context = stage.get("reference_context")
        if context:
            quotes.append({"text": context["text"], "match": context["match"]})
    score = segment.get("score") or {}
    return {
        "text": segment.get("text", ""),
        "label": segment.get("label"),
        "error_types": segment.get("error_types", []),
        "probability": score.get("probability"),
        "explanations": ([segment["note"]] if segment.get("note") else []) + explanations,
        "quotes": quotes,
    }


def _fact(verdict: dict[str, Any]) -> dict[str, Any]:
    value = verdict.get("verdict")
    return {
        "fact": verdict.get("fact", ""),
        "verdict": {True: "True", False: "False"}.get(value, verdict.get("unscored") or "unscored"),
        "raw": verdict.get("raw"),
        "citation": verdict.get("citation"),
        "citation_found": verdict.get("citation_match") is not None,
    }


def _failures(result: dict[str, Any]) -> list[str]:
    """The failure messages anywhere in a result (stage calls, claims' calls, fact generation, verification)."""
    found: list[str] = []

    def walk(node: Any) -> None:
        if isinstance(node, dict):
            failure = node.get("failure")
            if isinstance(failure, dict) and failure.get("message"):
                found.append(f"{failure.get('kind', '')}: {failure['message']}")
            for key, value in node.items():
                if key != "failure":
                    walk(value)
        elif isinstance(node, list):
            for value in node:
                walk(value)

    walk(result)
    return list(dict.fromkeys(found))
