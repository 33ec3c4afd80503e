"""From stage verdicts to segment and answer labels (§4.2: consistent iff every segment passes both stages).

A failed call never turns into a verdict: a segment or answer that failures leave undecided is "unscored",
unless a valid "inconsistent" verdict already decides it.
"""

from __future__ import annotations

from collections.abc import Sequence

from ragfacts.methods.precision.results import AnswerLabel, SegmentResult, StageResult


def segment_label(stages: Sequence[StageResult]) -> AnswerLabel:
    """Inconsistent if any stage says so; else unscored if any stage failed; else consistent."""
    if any(stage.verdict == "inconsistent" for stage in stages):
        return AnswerLabel.INCONSISTENT
    if any(stage.failed for stage in stages):
        return AnswerLabel.UNSCORED
    return AnswerLabel.CONSISTENT


def answer_label(segments: list[SegmentResult]) -> tuple[AnswerLabel, str | None]:
    """Return the answer's label and, when there is something to say, the reason."""
    if not segments:
        return AnswerLabel.UNSCORED, "the answer has no segments to check"
    # An optional call (an explanation of a decided verdict) that failed leaves nothing undecided
    failed = [stage for segment in segments for stage in segment.stages() if stage.failed and not stage.call.optional]
    failures = f"{len(failed)} stage call(s) failed" if failed else ""
    inconsistent = sum(segment.label is AnswerLabel.INCONSISTENT for segment in segments)
    if inconsistent:
        reason = f"{inconsistent} of {len(segments)} segment(s) inconsistent"
        return AnswerLabel.INCONSISTENT, f"{reason}; {failures}" if failed else reason
    if failed:
        first = failed[0].call.failure
        assert first is not None
        detail = f"{first.kind.value}: {first.message}"
        return AnswerLabel.UNSCORED, f"{failures} and no segment is inconsistent (first: {detail})"
    return AnswerLabel.CONSISTENT, None
