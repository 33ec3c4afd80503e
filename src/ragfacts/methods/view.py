"""What a result shows a person: its verdict, why, the units it judged (segments, claims, facts) and failures.

Every result type builds its own `ResultView` (`view()`); the terminal's verdict table, `Results.to_pandas()`
and the notebook view render views only, so a method is shown fully by what its own module says. A result
type without `view()` is shown by its common outcome.
"""

from __future__ import annotations

from importlib import import_module
from typing import Any, Literal, TypeVar

from pydantic import BaseModel, Field

from ragfacts.methods.base import Kind, MethodError, Outcome, method_class, registered_methods

M = TypeVar("M", bound=BaseModel)
UnitVerdict = Literal["supported", "unsupported", "uncertain", "unscored"]
# The error type shown for a flagged unit no judge typed: said plainly, never an empty list that reads "nothing found"
UNTYPED = "untyped"


class QuoteView(BaseModel):
    """A passage the judge says it took from the reference, and how it was found there."""

    text: str
    match: Literal["exact", "normalised", "not_found"]

    @property
    def found(self) -> bool:
        return self.match != "not_found"


class UnitView(BaseModel):
    """One judged unit: a segment or claim of the answer (precision) or an expected fact (recall)."""

    text: str
    verdict: UnitVerdict
    probability: float | None = None  # P(supported) where the method gives one
    error_types: list[str] = Field(default_factory=list)  # Face4RAG codes, e.g. "KConf."
    explanation: str = ""  # the first reason given against it
    checks: dict[str, str] = Field(default_factory=dict)  # each stage's verdict, e.g. {"fact": "consistent"}
    explanations: list[str] = Field(default_factory=list)  # every stage's reason against it, "stage: text"
    note: str = ""  # where the stages disagree, said plainly
    quotes: list[QuoteView] = Field(default_factory=list)
    said: str | None = None  # the model's own value (FaaF's three-way answer), where it is not the verdict
    citation: str | None = None  # the passage of the answer the model cites for a fact
    citation_found: bool | None = None


class ResultView(BaseModel):
    """One method's result on one answer, as a person reads it."""

    kind: Kind
    label: str | None = None  # precision: consistent, inconsistent, uncertain or unscored
    score: float | None = None  # faithfulness (share of supported segments) or recall (share of facts present)
    probability: float | None = None  # P(faithful), calibrated where the method has a calibration
    reason: str | None = None  # why, in one line
    units: list[UnitView] = Field(default_factory=list)
    failures: list[str] = Field(default_factory=list)  # failed calls, each with its stage and reason
    decided_by: str | None = None  # a cascade: which judge's verdict this is
    unit_name: str = "unit"  # what the units are: segment, claim, fact, problem
    decision: str | None = None  # how a probability decided, e.g. "P(faithful) = 0.72 >= 0.55 (calibrated)"
    headline: str | None = None  # the score in words, e.g. "2/3 facts (67%)"
    calibrated: bool = False  # whether `probability` is calibrated
    first: ResultView | None = None  # a cascade: the first judge's view, where the second decided

    @property
    def flagged(self) -> list[UnitView]:
        """The units judged unsupported (precision) or absent (recall)."""
        return [unit for unit in self.units if unit.verdict == "unsupported"]

    @property
    def error_types(self) -> list[str]:
        return list(dict.fromkeys(code for unit in self.units for code in unit.error_types))

    @property
    def why(self) -> str | None:
        """The first flagged unit with its error types and explanation, else the reason, else how a probability
        decided, else the first failure."""
        for unit in self.flagged:
            codes = f"[{', '.join(unit.error_types)}] " if unit.error_types else ""
            explanation = f" — {unit.explanation}" if unit.explanation else ""
            return f"{codes}{unit.text}{explanation}"
        return self.reason or self.decision or (self.failures[0] if self.failures else None)


_UNREGISTERED: list[type[BaseModel]] = []  # result types of methods built, not named by a spec (a cascade)


def unregistered_result(cls: type[M]) -> type[M]:
    """Declare the result type of a method that is not in the registry, so that its stored results read back."""
    _UNREGISTERED.append(cls)
    return cls


def typed_result(spec: str, stored: dict[str, Any]) -> BaseModel | None:
    """A stored result of method `spec` as its result type; None where no type reads it."""
    try:
        known = method_class(spec.split(":", 1)[0]).result_type
        candidates = [known] if known is not None else []
    except MethodError:  # a method built from others (a cascade): its spec names no registered method
        import_module("ragfacts.methods.cascade")  # declares its result type (`unregistered_result`) when imported
        candidates = list(_UNREGISTERED)
    for result_type in candidates:
        try:
            return result_type.model_validate(stored)
        except ValueError:
            continue
    return None


def view_of(spec: str, stored: dict[str, Any], outcome: Outcome | None = None) -> ResultView:
    """The view of a stored result of method `spec` (its results line's "result"), by the method's result type."""
    typed = typed_result(spec, stored)
    if typed is not None and hasattr(typed, "view"):
        view: ResultView = typed.view()
        return view
    return outcome_view(outcome if outcome is not None else Outcome.model_validate(stored.get("outcome", {})))


def precision_view(stored: dict[str, Any]) -> ResultView | None:
    """The view of a stored precision result whose method is not named (a cascade keeps its judges' results as
    data): the first precision result type that reads it."""
    for cls in registered_methods().values():
        if cls.kind != "precision" or cls.result_type is None:
            continue
        try:
            typed = cls.result_type.model_validate(stored)
        except ValueError:
            continue
        if hasattr(typed, "view"):
            view: ResultView = typed.view()
            return view
    return None


def outcome_view(outcome: Outcome) -> ResultView:
    """The view of a result known only by its common outcome."""
    return ResultView(kind=outcome.kind, label=outcome.label, score=outcome.score)


_UNIT_VERDICTS: dict[str, UnitVerdict] = {
    "consistent": "supported",
    "inconsistent": "unsupported",
    "uncertain": "uncertain",
    "supported": "supported",
    "unsupported": "unsupported",
}


def label_verdict(label: str | None) -> UnitVerdict:
    """A segment's label (or a claim's verdict) as a unit verdict; anything undecided is unscored."""
    return _UNIT_VERDICTS.get(label or "", "unscored")


def fact_verdict(present: bool | None) -> UnitVerdict:
    """A fact's verdict (present, absent, None: unscored) as a unit verdict."""
    if present is None:
        return "unscored"
    return "supported" if present else "unsupported"
