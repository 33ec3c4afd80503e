"""The service's request and response bodies; unknown fields are refused (422), like misspelled options."""

from __future__ import annotations

from typing import TYPE_CHECKING, Any, TypeVar

from pydantic import BaseModel, ConfigDict, Field, create_model, field_validator, model_validator

from ragfacts.methods.base import Kind
from ragfacts.runs.gates import GATES

M = TypeVar("M", bound=BaseModel)


class _Request(BaseModel):
    model_config = ConfigDict(extra="forbid")


def _not_blank(value: str | None, info: Any) -> str | None:
    if value is not None and not value.strip():
        raise ValueError(f"{info.field_name} is empty")
    return value


def _with_gates(name: str, model: type[M], *kinds: Kind) -> type[M]:
    """`model`, published as `name`, with a threshold field for each gate on methods of `kinds`, named and described
    as `GATES` declares them (the command line's `--min-*` options are made from the same declarations)."""
    fields: dict[str, Any] = {
        gate: (float | None, Field(None, ge=0.0, le=1.0, description=f"gate: fail below {spec.measures}"))
        for gate, spec in GATES.items()
        if spec.kind in kinds
    }
    return create_model(name, __base__=model, __module__=model.__module__, __doc__=model.__doc__, **fields)


def thresholds(body: BaseModel, *kinds: Kind) -> dict[str, float | None]:
    """The gates' thresholds a request gave (None: not given), for methods of `kinds`."""
    return {name: getattr(body, name) for name, spec in GATES.items() if spec.kind in kinds}


class _CheckRequest(_Request):
    """Precision of one answer against its reference."""

    reference: str = Field(description="what the answer must be faithful to (the retrieved context)")
    answer: str = Field(description="the answer to judge")
    question: str | None = Field(None, description="the question the answer replies to")
    id: str | None = Field(None, description="your id for this answer, echoed in the response")
    method: str | None = Field(
        None,
        description="a precision method spec, e.g. lface4rag:strategy=paper or holistic; default: the server's",
        examples=["lface4rag:strategy=paper"],
    )
    options: dict[str, Any] = Field(default_factory=dict, description="the method's options (override the spec's)")

    texts_not_blank = field_validator("reference", "answer", "question")(_not_blank)


class _RecallRequest(_Request):
    """Recall of one answer: which of the facts (given, or generated from the ground truth) it contains."""

    answer: str = Field(description="the answer to judge")
    facts: list[str] | None = Field(None, description="the facts the answer should contain")
    ground_truth: str | None = Field(None, description="the expected answer, to generate the facts from")
    question: str | None = Field(None, description="the question the answer replies to")
    id: str | None = Field(None, description="your id for this answer, echoed in the response")
    method: str | None = Field(
        None, description="a recall method spec, e.g. faaf:mode=tf or prompt-tf; default: the server's"
    )
    options: dict[str, Any] = Field(default_factory=dict, description="the method's options (override the spec's)")

    texts_not_blank = field_validator("answer", "ground_truth", "question")(_not_blank)

    @model_validator(mode="after")
    def _facts_or_ground_truth(self) -> _RecallRequest:
        if (self.facts is None) == (self.ground_truth is None):
            raise ValueError("give exactly one of facts or ground_truth")
        if self.facts is not None and (not self.facts or any(not fact.strip() for fact in self.facts)):
            raise ValueError("facts must be a non-empty list of non-empty texts")
        return self


class _EvaluateRequest(_Request):
    """Precision and recall of every row, as `ragfacts evaluate` judges a dataset file."""

    rows: list[dict[str, Any]] = Field(
        min_length=1,
        description="rows as in a dataset file: answer, reference and/or ground_truth (or facts), question, id; "
        "RAGAS and other known layouts are recognised, others named with `mapping`",
    )
    mapping: dict[str, str] | None = Field(None, description="field -> column, e.g. {'answer': 'response'}")
    precision: str | None = Field(
        None, description="precision method spec; absent: the server's default; null or 'none': skip precision"
    )
    recall: str | None = Field(
        None, description="recall method spec; absent: the server's default; null or 'none': skip recall"
    )


if TYPE_CHECKING:  # the gates' fields are read with `thresholds`
    CheckRequest = _CheckRequest
    RecallRequest = _RecallRequest
    EvaluateRequest = _EvaluateRequest
else:
    CheckRequest = _with_gates("CheckRequest", _CheckRequest, "precision")
    RecallRequest = _with_gates("RecallRequest", _RecallRequest, "recall")
    EvaluateRequest = _with_gates("EvaluateRequest", _EvaluateRequest, "precision", "recall")


class GateCheck(BaseModel):
    """One threshold against what was measured."""

    name: str = Field(description="min_consistent, min_faithfulness or min_recall")
    threshold: float
    method: str
    value: float | None = Field(description="what was measured; null when nothing could be judged")
    passed: bool
    message: str | None = Field(None, description="why it failed")


class Gate(BaseModel):
    """The thresholds the request gave, each checked; `passed` is null when it gave none."""

    passed: bool | None = None
    checks: list[GateCheck] = []


class JudgementResponse(BaseModel):
    """One answer judged: the method's full result, exactly as `ragfacts --json check/recall` prints it."""

    id: str | None = Field(None, description="the id the request gave")
    method: str = Field(description="the method spec that judged it")
    result: dict[str, Any] = Field(description="the method's full result (CheckResult, RecallResult, ...)")
    outcome: dict[str, Any] = Field(
        description="the common view: label, score, units, failures, complete, usage (calls, tokens)"
    )
    gate: Gate


class EvaluateResponse(BaseModel):
    """Every row judged: what `ragfacts --json evaluate` prints, without the run directory."""

    report: dict[str, Any] = Field(description="results, ran, incomplete, not_applicable, usage, seconds")
    summary: list[dict[str, Any]] = Field(description="per method: judged, % consistent, mean score with intervals")
    rows: list[dict[str, Any]] = Field(description="per row: id, label, faithfulness, recall, failures, results")
    gate: Gate


class ErrorBody(BaseModel):
    """Every error the service answers: a code word and a message that names the fix."""

    error: str = Field(description="e.g. invalid_request, unauthorized, too_large, busy, timeout")
    message: str
    detail: list[dict[str, Any]] | None = Field(None, description="per invalid field: loc, msg, type (422 only)")
