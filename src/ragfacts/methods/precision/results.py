"""What a precision check returns: the answer's label, per segment both verdicts, quotes, error types, usage.

A failed model call is part of the result (with its reason and the raw reply), never a missing field.
"""

from __future__ import annotations

from enum import Enum
from typing import Literal

from pydantic import BaseModel, Field, computed_field

from ragfacts.methods.base import Outcome
from ragfacts.methods.precision.options import CheckOptions
from ragfacts.methods.precision.schemas import LogicalStructure, Verdict
from ragfacts.methods.view import UNTYPED, QuoteView, ResultView, UnitView, label_verdict
from ragfacts.models import Completion, Failure, FailureKind
from ragfacts.typology import ErrorType
from ragfacts.usage import Usage

QuoteMatch = Literal["exact", "normalised", "not_found"]


class AnswerLabel(str, Enum):
    """An answer's (or a segment's) outcome; "unscored" when failures leave it undecided, "uncertain" when its
    probability falls in the abstain band the user set (a decided abstention, not a failure)."""

    CONSISTENT = "consistent"
    INCONSISTENT = "inconsistent"
    UNSCORED = "unscored"
    UNCERTAIN = "uncertain"


class QuoteCheck(BaseModel):
    """A passage the model says it copied from the reference, and whether it is really there."""

    text: str
    match: QuoteMatch

    @computed_field
    @property
    def verified(self) -> bool:
        return self.match != "not_found"


class CallRecord(BaseModel):
    """Provenance of one model call: prompt version, cost, the raw reply and any failure."""

    stage: str
    prompt_version: str | None = None
    latency_s: float = 0.0
    usage: Usage = Field(default_factory=Usage)
    text: str | None = None
    failure: Failure | None = None
    # One call judged several segments (options.batched): each segment's stage points to the call, whose cost
    # and reply are kept once, in CheckResult.batches.
    batched: bool = False
    # A call that only explains a decided verdict (`explain=generate`): its failure is reported, never counted as
    # the result's (the verdict stands, the result is complete, a rerun does not retry it).
    optional: bool = False

    @classmethod
    def of(cls, completion: Completion) -> CallRecord:
        return cls(
            stage=completion.stage,
            prompt_version=completion.prompt_version,
            latency_s=completion.latency_s,
            usage=completion.usage,
            text=completion.text,
            failure=completion.failure,
        )

    def pointer(self) -> CallRecord:
        """What a segment keeps of a batched call: its stage, prompt and failure; no cost, no reply."""
        return CallRecord(stage=self.stage, prompt_version=self.prompt_version, failure=self.failure, batched=True)


class StageResult(BaseModel):
    """One stage's outcome for one segment; `verdict` is None when the call failed."""

    verdict: Verdict | None = None
    error_type: ErrorType | None = None
    explanation: str = ""
    call: CallRecord

    @property
    def failed(self) -> bool:
        return self.call.failure is not None

    def quotes(self) -> list[QuoteCheck]:
        return []


class PointResult(BaseModel):
    """One informational point: its reference quote (verified), the check, its verdict."""

    point: str
    quote: QuoteCheck | None
    check: str
    verdict: Verdict


class FactResult(StageResult):
    """The fact-consistency stage of one segment.

    `verdict` is "consistent" only if the model said so and every point is consistent (§4.2 step 3);
    `model_verdict` keeps what the model wrote when the two disagree.
    """

    stage: Literal["fact"] = "fact"
    model_verdict: Verdict | None = None
    points: list[PointResult] = []

    def quotes(self) -> list[QuoteCheck]:
        return [p.quote for p in self.points if p.quote is not None]


class LogicResult(StageResult):
    """The logic-consistency stage of one segment (Figure 5)."""

    stage: Literal["logic"] = "logic"
    reference_context: QuoteCheck | None = None
    segment_structure: LogicalStructure | None = None
    reference_structure: LogicalStructure | None = None

    def quotes(self) -> list[QuoteCheck]:
        return [self.reference_context] if self.reference_context is not None else []


class ScoreResult(StageResult):
    """The sentence_scores stage of one segment: P(supported) from the Yes/No first-token probabilities."""

    stage: Literal["score"] = "score"
    probability: float | None = None
    threshold: float


class HolisticResult(StageResult):
    """A judgement of the whole answer: a verdict with the problems found, or P(supported) against a threshold."""

    stage: Literal["holistic"] = "holistic"
    problems: list[str] = []
    # holistic_score and trained_head: P(faithful), calibrated where `calibrated` (else the raw score)
    probability: float | None = None
    raw_probability: float | None = None  # the score before calibration: P(Yes), or the head's output
    calibrated: bool = False
    threshold: float | None = None  # on the scale of `probability`
    band: tuple[float, float] | None = None  # the abstain band applied


class SegmentResult(BaseModel):
    """One segment of the answer: both stages, its own label and the error types of its failing stages."""

    index: int
    text: str
    score: ScoreResult | None = None  # sentence_scores strategy
    fact: FactResult | None = None  # None only under sentence_scores, for sentences that passed
    logic: LogicResult | None = None
    label: AnswerLabel
    note: str | None = None  # where the stages disagree, or the segment is not in the answer, said plainly
    # A segment the decomposition wrote: the share of its content found in the answer (and question), and whether
    # that is enough to call it the answer's text. One that is not never counts as consistent.
    answer_share: float | None = None
    from_answer: bool = True

    def stages(self) -> list[StageResult]:
        return [stage for stage in (self.score, self.fact, self.logic) if stage is not None]

    @computed_field
    @property
    def error_types(self) -> list[ErrorType]:
        found = [s.error_type for s in self.stages() if s.verdict == "inconsistent" and s.error_type is not None]
        return list(dict.fromkeys(found))


class StageFailure(BaseModel):
    """A failed model call, where it happened and why; `optional` for an explanation's (the verdict stands)."""

    stage: str
    segment: int | None = None
    kind: FailureKind
    message: str
    optional: bool = False


class CheckResult(BaseModel):
    """The precision check of one answer."""

    id: str | None = None
    label: AnswerLabel
    reason: str | None = None
    lang: str
    model: str = ""
    options: CheckOptions
    holistic: HolisticResult | None = None
    decomposition: CallRecord | None = None
    batches: list[CallRecord] = []  # options.batched: the calls that judged all segments at once
    segments: list[SegmentResult] = []
    usage: Usage = Field(default_factory=Usage)

    def calls(self) -> list[tuple[CallRecord, int | None]]:
        """Every model call of this check, once each, with the segment it belongs to (None: several or none)."""
        found: list[tuple[CallRecord, int | None]] = []
        if self.holistic is not None:
            found.append((self.holistic.call, None))
        if self.decomposition is not None:
            found.append((self.decomposition, None))
        found += [(call, None) for call in self.batches]
        found += [
            (stage.call, segment.index)
            for segment in self.segments
            for stage in segment.stages()
            if not stage.call.batched
        ]
        return found

    @computed_field
    @property
    def error_types(self) -> list[ErrorType]:
        return list(dict.fromkeys(t for segment in self.segments for t in segment.error_types))

    @computed_field
    @property
    def faithfulness(self) -> float | None:
        """Share of segments judged consistent (unscored ones count as not).

        Without segments (an answer judged as a whole) the answer is the one unit: 1 if consistent, 0 if
        inconsistent, None if unscored.
        """
        if self.segments:
            return sum(s.label is AnswerLabel.CONSISTENT for s in self.segments) / len(self.segments)
        return {AnswerLabel.CONSISTENT: 1.0, AnswerLabel.INCONSISTENT: 0.0}.get(self.label)

    def outcome(self) -> Outcome:
        """The common view: label, faithfulness (and its upper bound if unscored segments were consistent)."""
        upper = self.faithfulness
        if self.segments:
            supported = sum(s.label is not AnswerLabel.INCONSISTENT for s in self.segments)
            upper = supported / len(self.segments)
        return Outcome(
            kind="precision",
            label=self.label.value,
            score=self.faithfulness,
            score_upper=upper,
            units=len(self.segments),
            failures=self.failure_count,
            # Retried by the next run only if a call failed. Unscored with no failed call (an empty answer, nothing
            # to check, a decomposition that wrote text the answer lacks) is a decided result, with its reason: a
            # rerun (same prompt, temperature 0, cache) would say the same.
            complete=self.failure_count == 0,
            usage=self.usage,
        )

    def view(self) -> ResultView:
        """The label, P(faithful) where a probability decided, each segment with its stages, quotes and reasons."""
        units = [_segment_view(segment) for segment in self.segments]
        holistic = self.holistic
        probability = holistic.probability if holistic is not None else None
        decision = None
        if holistic is not None and holistic.explanation:
            leaning: str = holistic.verdict or "-"
            if self.label is AnswerLabel.UNCERTAIN:  # the threshold's side, said as a leaning, not as the verdict
                leaning = f"uncertain, leans {leaning}"
            decision = f"{leaning} — {holistic.explanation}" if probability is not None else holistic.explanation
        failures = [
            f"{f.stage}{f' (segment {f.segment + 1})' if f.segment is not None else ''}: {f.kind.value}: {f.message}"
            + (" (an explanation, best effort: the verdict stands)" if f.optional else "")
            for f in self.failures
        ]
        return ResultView(
            kind="precision",
            label=self.label.value,
            score=self.faithfulness,
            probability=probability,
            calibrated=bool(holistic and holistic.calibrated),
            reason=self.reason,
            decision=decision,
            units=units,
            unit_name="segment",
            failures=failures,
        )

    @computed_field
    @property
    def failures(self) -> list[StageFailure]:
        return [
            StageFailure(
                stage=call.stage,
                segment=segment,
                kind=call.failure.kind,
                message=call.failure.message,
                optional=call.optional,
            )
            for call, segment in self.calls()
            if call.failure is not None
        ]

    @computed_field
    @property
    def failure_count(self) -> int:
        """Failed calls that leave the result undecided; an optional explanation's failure is not one."""
        return sum(call.failure is not None and not call.optional for call, _ in self.calls())

    @computed_field
    @property
    def segments_not_in_answer(self) -> int:
        """Segments the decomposition wrote that are not the answer's text (an injected instruction, say)."""
        return sum(not segment.from_answer for segment in self.segments)

    @computed_field
    @property
    def unverified_quotes(self) -> int:
        return sum(
            not quote.verified for segment in self.segments for stage in segment.stages() for quote in stage.quotes()
        )


def _segment_view(segment: SegmentResult) -> UnitView:
    """A segment as a unit: its label, its stages' verdicts, what they said against it, the quotes they took."""
    failing = [stage for stage in segment.stages() if stage.verdict == "inconsistent" and stage.explanation]
    return UnitView(
        text=segment.text,
        verdict=label_verdict(segment.label.value),
        probability=segment.score.probability if segment.score is not None else None,
        error_types=[t.value for t in segment.error_types]
        or ([UNTYPED] if segment.label is AnswerLabel.INCONSISTENT else []),
        explanation=failing[0].explanation if failing else segment.note or "",
        checks={_stage_name(stage): "failed" if stage.failed else str(stage.verdict) for stage in segment.stages()},
        explanations=[f"{stage.call.stage}: {stage.explanation}" for stage in failing],
        note=segment.note or "",
        quotes=[QuoteView(text=q.text, match=q.match) for stage in segment.stages() for q in stage.quotes()],
    )


def _stage_name(stage: StageResult) -> str:
    """A stage's short name: fact, logic, score."""
    return str(getattr(stage, "stage", stage.call.stage))
