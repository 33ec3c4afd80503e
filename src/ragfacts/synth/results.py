"""What synthesis made of one row: every candidate, kept or not, with the calls that made and checked it."""

from __future__ import annotations

from typing import Any, Literal

from pydantic import BaseModel, Field

from ragfacts.methods.base import Outcome
from ragfacts.methods.precision.results import CallRecord
from ragfacts.synth.edits import Span
from ragfacts.synth.options import SynthOptions, type_slug
from ragfacts.typology import ErrorType
from ragfacts.usage import Usage

# original: the row's own answer; written: the model wrote it from the reference; paraphrase: a positive;
# injection: an answer with one error of `error_type`.
Kind = Literal["original", "written", "paraphrase", "injection"]
# kept: written to the dataset; not_applied: no usable edit or rewording came back; rejected: the verifier
# said it did not take; failed: a call failed (the row is retried by the next run).
Status = Literal["kept", "not_applied", "rejected", "failed"]


class Candidate(BaseModel):
    """One answer synthesis tried to make, and what became of it."""

    kind: Kind
    index: int = 0  # paraphrases: 1, 2, ...
    error_type: ErrorType | None = None
    status: Status
    reason: str = ""
    answer: str | None = None  # the candidate answer; None when none came back
    span: Span | None = None
    made_by: CallRecord | None = None  # None for the row's own answer
    check: dict[str, Any] | None = None  # the verifier's reply
    checked_by: CallRecord | None = None

    @property
    def slug(self) -> str:
        """The candidate's name in its item id: "original", "paraphrase-2", "contradiction"."""
        if self.kind == "injection" and self.error_type is not None:
            return type_slug(self.error_type)
        return f"paraphrase-{self.index}" if self.kind == "paraphrase" else self.kind

    @property
    def label(self) -> Literal["consistent", "inconsistent"]:
        return "inconsistent" if self.kind == "injection" else "consistent"

    def calls(self) -> list[CallRecord]:
        return [call for call in (self.made_by, self.checked_by) if call is not None]


class SynthResult(BaseModel):
    """Every candidate of one row: the faithful answer first, then paraphrases, then one injection per type."""

    id: str | None = None
    lang: str
    model: str = ""
    options: SynthOptions
    candidates: list[Candidate] = Field(default_factory=list)
    usage: Usage = Field(default_factory=Usage)

    @property
    def failures(self) -> int:
        return sum(call.failure is not None for c in self.candidates for call in c.calls())

    def counted(self) -> SynthResult:
        """This result with its usage summed over its calls."""
        self.usage = Usage.sum(call.usage for c in self.candidates for call in c.calls())
        return self

    def outcome(self) -> Outcome:
        # The runner's common terms: a row with a failed call is incomplete, so the next run retries it.
        return Outcome(
            kind="precision",
            units=len(self.candidates),
            failures=self.failures,
            complete=self.failures == 0,
            usage=self.usage,
        )
