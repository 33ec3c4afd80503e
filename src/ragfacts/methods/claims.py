"""What the claim-based baselines share: claims (atomic facts, sentences, statements, triplets) with verdicts.

FActScore, FELM, RAGAS faithfulness and RefChecker all cut the answer into claims and judge each against the
reference; they differ in how they cut, how many calls they make and how they aggregate. Their results have
one shape, so reports and metrics read them alike. A claim whose call failed is unscored: it counts as not
supported in the score, and it leaves the answer unscored unless a valid verdict already decides it.
"""

from __future__ import annotations

from typing import Literal

from pydantic import BaseModel, Field, computed_field

from ragfacts.methods.base import Outcome
from ragfacts.methods.precision.results import AnswerLabel, CallRecord
from ragfacts.methods.view import ResultView, UnitView, label_verdict
from ragfacts.usage import Usage

ClaimVerdict = Literal["supported", "unsupported", "contradicted"]


class Claim(BaseModel):
    """One claim of the answer and its verdict (None: its call failed)."""

    text: str
    verdict: ClaimVerdict | None = None
    reason: str = ""


class ClaimsCheck(BaseModel):
    """A claim-based baseline's judgement of one answer."""

    method: str
    id: str | None = None
    label: AnswerLabel = AnswerLabel.UNSCORED
    reason: str | None = None
    lang: str
    model: str = ""
    claims: list[Claim] = Field(default_factory=list)
    score: float | None = None  # the method's own score (e.g. the FActScore, RAGAS faithfulness)
    calls: list[CallRecord] = Field(default_factory=list)

    @computed_field
    @property
    def usage(self) -> Usage:
        return Usage.sum(call.usage for call in self.calls)

    @computed_field
    @property
    def failure_count(self) -> int:
        return sum(call.failure is not None for call in self.calls)

    def supported_share(self, upper: bool = False) -> float | None:
        """Claims judged supported over all claims; with `upper`, unscored claims count as supported."""
        if not self.claims:
            return None
        counted = sum(c.verdict == "supported" or (upper and c.verdict is None) for c in self.claims)
        return counted / len(self.claims)

    def view(self) -> ResultView:
        """The label, the method's score, and each claim with its verdict and reason."""
        return ResultView(
            kind="precision",
            label=self.label.value,
            score=self.score,
            reason=self.reason,
            units=[
                UnitView(
                    text=claim.text,
                    verdict=label_verdict("unsupported" if claim.verdict == "contradicted" else claim.verdict),
                    explanation=claim.reason,
                    said=claim.verdict if claim.verdict == "contradicted" else None,
                )
                for claim in self.claims
            ],
            failures=[f"{c.stage}: {c.failure.kind.value}: {c.failure.message}" for c in self.calls if c.failure],
            unit_name="claim",
        )

    def outcome(self) -> Outcome:
        return Outcome(
            kind="precision",
            label=self.label.value,
            score=self.score,
            score_upper=self.supported_share(upper=True) if self.claims else self.score,
            units=len(self.claims),
            failures=self.failure_count,
            complete=self.failure_count == 0,  # "no claims were extracted" is decided, not retried
            usage=self.usage,
        )


def strict_label(claims: list[Claim]) -> tuple[AnswerLabel, str | None]:
    """Consistent iff every claim is supported; an unscored claim leaves it undecided unless another failed."""
    if not claims:
        return AnswerLabel.UNSCORED, "no claims were extracted from the answer"
    against = sum(c.verdict in ("unsupported", "contradicted") for c in claims)
    unscored = sum(c.verdict is None for c in claims)
    if against:
        return AnswerLabel.INCONSISTENT, f"{against} of {len(claims)} claim(s) not supported"
    if unscored:
        return AnswerLabel.UNSCORED, f"{unscored} of {len(claims)} claim(s) unscored (failed calls)"
    return AnswerLabel.CONSISTENT, None


def share_label(claims: list[Claim], threshold: float) -> tuple[AnswerLabel, str | None]:
    """Consistent iff the supported share reaches `threshold`; undecided while unscored claims could change it."""
    if not claims:
        return AnswerLabel.UNSCORED, "no claims were extracted from the answer"
    low = sum(c.verdict == "supported" for c in claims) / len(claims)
    high = sum(c.verdict in ("supported", None) for c in claims) / len(claims)
    reason = f"{low:.2f} of the claims supported (threshold {threshold:g})"
    if low >= threshold:
        return AnswerLabel.CONSISTENT, reason
    if high < threshold:
        return AnswerLabel.INCONSISTENT, reason
    return AnswerLabel.UNSCORED, reason + "; unscored claims could decide it"
