"""What each precision stage asks the model for: pydantic schemas whose descriptions are instructions.

Field order is reasoning order (points, quotes and checks first, the verdict last), because the model
writes the fields in that order. Descriptions are written in English and Chinese (`ragfacts.methods.bilingual`),
so a Chinese prompt is not followed by English rules.
"""

from __future__ import annotations

from typing import Literal

from pydantic import BaseModel, Field, field_validator

from ragfacts.methods.bilingual import chinese_doc_of, schema_doc, schema_text
from ragfacts.typology import ErrorType, typology_text

Verdict = Literal["consistent", "inconsistent"]
LogicalRelation = Literal[
    "causal",
    "sufficient_condition",
    "necessary_condition",
    "sufficient_and_necessary",
    "inclusion",
    "generalisation",
    "parallel",
    "contrast",
    "sequence",
    "other",
]

chinese_doc_of("precision.ErrorType.doc")(ErrorType)

_ERROR_TYPE = schema_text("precision.error_type", typology_text)
_VERDICT = schema_text("precision.verdict")


def _nonblank(items: list[str]) -> list[str]:
    kept = [item.strip() for item in items if item.strip()]
    if not kept:
        raise ValueError("give at least one non-empty item")
    return kept


class Decomposition(BaseModel):
    __doc__ = schema_doc("precision.Decomposition.doc")

    segments: list[str] = Field(
        min_length=1,
        description=schema_text("precision.Decomposition.segments"),
    )

    @field_validator("segments")
    @classmethod
    def _drop_blank(cls, value: list[str]) -> list[str]:
        return _nonblank(value)


class AtomicStatements(BaseModel):
    __doc__ = schema_doc("precision.AtomicStatements.doc")

    statements: list[str] = Field(
        min_length=1,
        description=schema_text("precision.AtomicStatements.statements"),
    )

    @field_validator("statements")
    @classmethod
    def _drop_blank(cls, value: list[str]) -> list[str]:
        return _nonblank(value)


class PointCheck(BaseModel):
    __doc__ = schema_doc("precision.PointCheck.doc")

    point: str = Field(description=schema_text("precision.PointCheck.point"))
    reference_quote: str = Field(description=schema_text("precision.PointCheck.reference_quote"))
    check: str = Field(description=schema_text("precision.PointCheck.check"))
    verdict: Verdict = Field(description=schema_text("precision.PointCheck.verdict"))


class FactCheck(BaseModel):
    __doc__ = schema_doc("precision.FactCheck.doc")

    points: list[PointCheck] = Field(
        min_length=1,
        description=schema_text("precision.FactCheck.points"),
    )
    error_type: ErrorType | None = Field(description=_ERROR_TYPE)
    verdict: Verdict = Field(description=schema_text("precision.FactCheck.verdict"))


class FactVerdict(BaseModel):
    __doc__ = schema_doc("precision.FactVerdict.doc")

    error_type: ErrorType | None = Field(description=_ERROR_TYPE)
    verdict: Verdict = Field(description=_VERDICT)


class LogicalLink(BaseModel):
    __doc__ = schema_doc("precision.LogicalLink.doc")

    connective: str = Field(description=schema_text("precision.LogicalLink.connective"))
    relation: LogicalRelation = Field(description=schema_text("precision.LogicalLink.relation"))
    components: list[str] = Field(description=schema_text("precision.LogicalLink.components"))


class LogicalStructure(BaseModel):
    __doc__ = schema_doc("precision.LogicalStructure.doc")

    links: list[LogicalLink] = Field(description=schema_text("precision.LogicalStructure.links"))
    framework: str = Field(description=schema_text("precision.LogicalStructure.framework"))


class LogicCheck(BaseModel):
    __doc__ = schema_doc("precision.LogicCheck.doc")

    reference_context: str = Field(description=schema_text("precision.LogicCheck.reference_context"))
    segment_structure: LogicalStructure = Field(description=schema_text("precision.LogicCheck.segment_structure"))
    reference_structure: LogicalStructure = Field(description=schema_text("precision.LogicCheck.reference_structure"))
    comparison: str = Field(description=schema_text("precision.LogicCheck.comparison"))
    error_type: ErrorType | None = Field(description=_ERROR_TYPE)
    verdict: Verdict = Field(description=schema_text("precision.LogicCheck.verdict"))


class LogicVerdict(BaseModel):
    __doc__ = schema_doc("precision.LogicVerdict.doc")

    error_type: ErrorType | None = Field(description=_ERROR_TYPE)
    verdict: Verdict = Field(description=_VERDICT)


class HolisticJudgement(BaseModel):
    __doc__ = schema_doc("precision.HolisticJudgement.doc")

    problems: list[str] = Field(description=schema_text("precision.HolisticJudgement.problems"))
    verdict: Verdict = Field(description=schema_text("precision.HolisticJudgement.verdict"))


class HolisticVerdict(BaseModel):
    __doc__ = schema_doc("precision.HolisticVerdict.doc")

    verdict: Verdict = Field(description=_VERDICT)
