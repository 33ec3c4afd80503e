"""A judgement from one answer's row and result: passed, score, and the text a person reads when it fails.

The text names the verdict, every flagged segment in full with its error types and the judge's reasons, and
every failed call; a judgement that could not be made says so in its first line.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any, Literal

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
    from ragfacts.methods.holistic import HolisticCheck
    from ragfacts.methods.lface4rag import CheckResult

    label = str(row.get("label") or "unscored")
    judged = label in _DECIDED
    score = row.get("faithfulness") if judged else None
    if not judged:
        head = f"ragfacts ({method}) could not judge this answer (UNSCORED): no judgement was made, so it fails"
    elif label == "uncertain":
        head = f"ragfacts ({method}): UNCERTAIN: the judge abstained (its probability is in the abstain band)"
    else:
        head = f"ragfacts ({method}): {label.upper()}" + (f", faithfulness {score:.2f}" if score is not None else "")
    lines = [head]
    if isinstance(result, CheckResult):
        lines += _check_lines(result)
    elif isinstance(result, HolisticCheck):
        lines += [f"  problem: {problem}" for problem in result.judgement.problems]
        failure = result.judgement.call.failure
        if failure is not None:
            lines.append(f"failed call: holistic: {failure.kind.value}: {failure.message}")
    elif row.get("failures"):
        lines.append(f"failed calls: {row['failures']}")
    return Judgement("faithfulness", label == "consistent", judged, score, label, "\n".join(lines), result)


def _check_lines(result: Any) -> list[str]:
    lines = [f"reason: {result.reason}"] if result.reason else []
    holistic = result.holistic
    if holistic is not None:
        verdict = holistic.verdict or "none"
        lines.append(f"holistic judgement: {verdict}" + (f": {holistic.explanation}" if holistic.explanation else ""))
        lines += [f"  problem: {problem}" for problem in holistic.problems]
    for segment in result.segments:
        if segment.label.value == "consistent":
            continue
        lines.append(f'flagged segment #{segment.index + 1} ({segment.label.value}): "{segment.text}"')
        if segment.error_types:
            names = ", ".join(f"{t.value} ({t.info.name_en})" for t in segment.error_types)
            lines.append(f"  error types: {names}")
        for stage in segment.stages():
            if stage.verdict == "inconsistent" and stage.explanation:
                lines.append(f"  {stage.call.stage}: " + stage.explanation.replace("\n", "\n    "))
        if segment.note:
            lines.append(f"  note: {segment.note}")
    for failure in result.failures:
        where = f" (segment {failure.segment + 1})" if failure.segment is not None else ""
        lines.append(f"failed call: {failure.stage}{where}: {failure.kind.value}: {failure.message}")
    return lines


def explain_recall(method: str, row: dict[str, Any], result: Any, min_recall: float) -> Judgement:
    """The recall judgement of one answer; it passes when every fact was judged and recall >= `min_recall`."""
    from ragfacts.methods.recall import RecallResult

    recall = row.get("recall")
    judged = bool(row.get("complete")) and recall is not None
    passed = judged and recall >= min_recall
    label = "recalled" if passed else "missing" if judged else "unscored"
    if not judged:
        head = f"ragfacts ({method}) could not judge recall (UNSCORED): no judgement was made, so it fails"
    else:
        required = f"below the {min_recall:.2f} required" if not passed else f"at least the {min_recall:.2f} required"
        head = f"ragfacts ({method}): recall {recall:.2f}, {required}"
    lines = [head]
    if isinstance(result, RecallResult):
        generation = result.fact_generation
        if generation is not None and generation.failure is not None:
            failure = generation.failure
            lines.append(f"fact generation failed: {failure.kind.value}: {failure.message}")
        elif not result.facts:
            lines.append("no facts to check: the ground truth gave none")
        for number, verdict in enumerate(result.verification.verdicts, start=1):
            if verdict.verdict is True:
                continue
            said = f"the judge said {verdict.raw}" if verdict.raw is not None else ""
            why = f"unscored ({verdict.unscored}): {verdict.failure}" if verdict.verdict is None else said
            state = "not judged" if verdict.verdict is None else "not recalled"
            lines.append(f'{state}: fact {number}: "{verdict.fact}"' + (f" ({why})" if why else ""))
        lines += [f"failed call: {f.kind.value}: {f.message}" for f in result.verification.failures]
    elif row.get("failures"):
        lines.append(f"failed calls: {row['failures']}")
    return Judgement("recall", passed, judged, recall if judged else None, label, "\n".join(lines), result)
