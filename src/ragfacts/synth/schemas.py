"""The replies `ragfacts synth` asks for: one pydantic schema per call, descriptions in the prompt's language.

Field descriptions are instructions to the model (they reach it in every structured mode), so each is written
as one, in English with its Chinese text registered beside it.
"""

from __future__ import annotations

from pydantic import BaseModel, Field

from ragfacts.methods.bilingual import bilingual, chinese_doc_of, schema_text
from ragfacts.typology import ErrorType, typology_text


@chinese_doc_of("synth.WrittenAnswer.doc")
class WrittenAnswer(BaseModel):
    """An answer written from the reference alone."""

    answer: str = Field(description=schema_text("synth.WrittenAnswer.answer"))


@chinese_doc_of("synth.Injection.doc")
class Injection(BaseModel):
    """One edit to the answer that gives it an error of the type asked for."""

    thinking: str = Field(description=schema_text("synth.Injection.thinking"))
    original: str = Field(description=schema_text("synth.Injection.original"))
    replacement: str = Field(description=schema_text("synth.Injection.replacement"))


@chinese_doc_of("synth.Paraphrase.doc")
class Paraphrase(BaseModel):
    """One rewording of the answer."""

    paraphrase: str = Field(description=schema_text("synth.Paraphrase.paraphrase"))


@chinese_doc_of("synth.EditCheck.doc")
class EditCheck(BaseModel):
    """A check of one edit to an answer that was faithful to its reference."""

    reasoning: str = Field(description=schema_text("synth.EditCheck.reasoning"))
    error_type: ErrorType | None = Field(
        description=bilingual(
            "The type of the error the edit introduced; null if the edited answer is still fully supported by the "
            "reference.\n" + typology_text("en"),
            "这处改动引入的错误类型；如果改动后的回答仍然完全被参考资料支持，则为 null。\n" + typology_text("zh"),
        )
    )
    only_error: bool = Field(description=schema_text("synth.EditCheck.only_error"))


@chinese_doc_of("synth.ParaphraseCheck.doc")
class ParaphraseCheck(BaseModel):
    """A check of one rewording of an answer that was faithful to its reference."""

    reasoning: str = Field(description=schema_text("synth.ParaphraseCheck.reasoning"))
    same_meaning: bool = Field(description=schema_text("synth.ParaphraseCheck.same_meaning"))
    supported: bool = Field(description=schema_text("synth.ParaphraseCheck.supported"))


@chinese_doc_of("synth.AnswerCheck.doc")
class AnswerCheck(BaseModel):
    """A check that an answer is faithful to its reference."""

    reasoning: str = Field(description=schema_text("synth.AnswerCheck.reasoning"))
    supported: bool = Field(description=schema_text("synth.AnswerCheck.supported"))
