"""The replies `ragfacts synth` asks for: one pydantic schema per call, descriptions in the prompt's language.

Field descriptions are instructions to the model (they reach it in every structured mode), so each is written
as one, in English with its Chinese text registered beside it.
"""

from __future__ import annotations

from pydantic import BaseModel, Field

from ragfacts.methods.bilingual import schema_doc, schema_text
from ragfacts.typology import ErrorType, typology_text


class WrittenAnswer(BaseModel):
    __doc__ = schema_doc("synth.WrittenAnswer.doc")

    answer: str = Field(description=schema_text("synth.WrittenAnswer.answer"))


class Injection(BaseModel):
    __doc__ = schema_doc("synth.Injection.doc")

    thinking: str = Field(description=schema_text("synth.Injection.thinking"))
    original: str = Field(description=schema_text("synth.Injection.original"))
    replacement: str = Field(description=schema_text("synth.Injection.replacement"))


class Paraphrase(BaseModel):
    __doc__ = schema_doc("synth.Paraphrase.doc")

    paraphrase: str = Field(description=schema_text("synth.Paraphrase.paraphrase"))


class EditCheck(BaseModel):
    __doc__ = schema_doc("synth.EditCheck.doc")

    reasoning: str = Field(description=schema_text("synth.EditCheck.reasoning"))
    error_type: ErrorType | None = Field(description=schema_text("synth.EditCheck.error_type", typology_text))
    only_error: bool = Field(description=schema_text("synth.EditCheck.only_error"))


class ParaphraseCheck(BaseModel):
    __doc__ = schema_doc("synth.ParaphraseCheck.doc")

    reasoning: str = Field(description=schema_text("synth.ParaphraseCheck.reasoning"))
    same_meaning: bool = Field(description=schema_text("synth.ParaphraseCheck.same_meaning"))
    supported: bool = Field(description=schema_text("synth.ParaphraseCheck.supported"))


class AnswerCheck(BaseModel):
    __doc__ = schema_doc("synth.AnswerCheck.doc")

    reasoning: str = Field(description=schema_text("synth.AnswerCheck.reasoning"))
    supported: bool = Field(description=schema_text("synth.AnswerCheck.supported"))
