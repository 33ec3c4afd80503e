"""Per-fact verdicts and the verification of one passage, shared by FaaF and the prompt baseline."""

from __future__ import annotations

from typing import Any, Literal

from pydantic import BaseModel, Field, computed_field

from ragfacts.models import Failure
from ragfacts.usage import Usage

Unscored = Literal["failed", "no_verdict"]  # the call failed / the reply held no readable verdict


class FactVerdict(BaseModel):
    """One fact checked against one passage; `verdict` is None when the fact is unscored."""

    index: int
    fact: str
    verdict: bool | None = None
    raw: str | None = Field(None, description="the model's own value, e.g. the three-way FaaF value or reply text")
    citation: str | None = None
    citation_match: Literal["exact", "normalised"] | None = None
    probability: float | None = None  # fact-scores: P(True)
    unscored: Unscored | None = None
    failure: str | None = None


class Verification(BaseModel):
    """All facts checked against one passage by one method, with what it cost and what failed.

    Unscored facts stay in every denominator: `recall` counts them as not recalled and `recall_upper`
    as recalled, so a failure widens the interval instead of disappearing.
    """

    method: str
    lang: str
    config: dict[str, Any] = Field(default_factory=dict)
    verdicts: list[FactVerdict] = Field(default_factory=list)
    failures: list[Failure] = Field(default_factory=list)
    completions: list[dict[str, Any]] = Field(default_factory=list)

    @computed_field
    @property
    def n_facts(self) -> int:
        return len(self.verdicts)

    @computed_field
    @property
    def n_true(self) -> int:
        return sum(v.verdict is True for v in self.verdicts)

    @computed_field
    @property
    def n_false(self) -> int:
        return sum(v.verdict is False for v in self.verdicts)

    @computed_field
    @property
    def n_failed(self) -> int:
        return sum(v.unscored == "failed" for v in self.verdicts)

    @computed_field
    @property
    def n_no_verdict(self) -> int:
        return sum(v.unscored == "no_verdict" for v in self.verdicts)

    @computed_field
    @property
    def recall(self) -> float | None:
        """Facts judged True over all facts; None without facts."""
        return self.n_true / self.n_facts if self.n_facts else None

    @computed_field
    @property
    def recall_upper(self) -> float | None:
        """Recall if every unscored fact had been True."""
        if not self.n_facts:
            return None
        return (self.n_true + self.n_failed + self.n_no_verdict) / self.n_facts

    @computed_field
    @property
    def citations_given(self) -> int:
        return sum(bool(v.citation and v.citation.strip()) for v in self.verdicts)

    @computed_field
    @property
    def citations_verified(self) -> int:
        """Citations found in the passage, verbatim or after normalisation."""
        return sum(v.citation_match is not None for v in self.verdicts)

    @computed_field
    @property
    def usage(self) -> Usage:
        """What the verification calls cost."""
        return Usage.sum(Usage.model_validate(c.get("usage", {})) for c in self.completions)

    @property
    def ok(self) -> bool:
        return not self.failures
