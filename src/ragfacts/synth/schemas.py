"""The replies `ragfacts synth` asks for: one pydantic schema per call, descriptions in the prompt's language.

Field descriptions are instructions to the model (they reach it in every structured mode), so each is written
as one, in English with its Chinese text registered beside it.
"""

from __future__ import annotations

from pydantic import BaseModel, Field

from ragfacts.methods.bilingual import bilingual, chinese_doc
from ragfacts.typology import ErrorType, typology_text


@chinese_doc("一个只依据参考资料写成的回答。")
class WrittenAnswer(BaseModel):
    """An answer written from the reference alone."""

    answer: str = Field(
        description=bilingual(
            "The answer: two to four sentences, using only what the reference says.",
            "回答：两到四句话，只使用参考资料中的内容。",
        )
    )


@chinese_doc("对回答的一处改动，使它带上指定类型的错误。")
class Injection(BaseModel):
    """One edit to the answer that gives it an error of the type asked for."""

    thinking: str = Field(
        description=bilingual(
            "Which part of the answer you change, and why the edited answer then carries this error and no other: "
            "one or two sentences.",
            "你要改动回答的哪一部分，以及为什么改动后的回答恰好带有这种错误、没有别的错误：一两句话。",
        )
    )
    original: str = Field(
        description=bilingual(
            "The part of the answer you change, copied character for character from the answer: a few words, a "
            "clause or one sentence. To add a sentence, copy the sentence it follows.",
            "你要改动的回答原文，逐字照抄：几个词、一个分句或一句话。若要新增一句，就照抄新句前面的那一句。",
        )
    )
    replacement: str = Field(
        description=bilingual(
            'The text that takes the place of "original", in the language of the answer. To add a sentence: the '
            "copied sentence followed by the new one.",
            "替换 original 的新文字，使用回答的语言。若要新增一句：先写照抄的那一句，再接上新句。",
        )
    )


@chinese_doc("对回答的一种改写。")
class Paraphrase(BaseModel):
    """One rewording of the answer."""

    paraphrase: str = Field(
        description=bilingual(
            "The reworded answer: the same content in other words.",
            "改写后的回答：同样的内容，换一种说法。",
        )
    )


@chinese_doc("对回答的一处改动的检查。")
class EditCheck(BaseModel):
    """A check of one edit to an answer that was faithful to its reference."""

    reasoning: str = Field(
        description=bilingual(
            "What the edit changes, compared with what the reference says: one or two sentences.",
            "与参考资料相比，这处改动改变了什么：一两句话。",
        )
    )
    error_type: ErrorType | None = Field(
        description=bilingual(
            "The type of the error the edit introduced; null if the edited answer is still fully supported by the "
            "reference.\n" + typology_text("en"),
            "这处改动引入的错误类型；如果改动后的回答仍然完全被参考资料支持，则为 null。\n" + typology_text("zh"),
        )
    )
    only_error: bool = Field(
        description=bilingual(
            "true if the edit introduced this one error and nothing else (no second error, no other change of "
            "meaning); false otherwise.",
            "如果这处改动只引入了这一个错误（没有第二个错误，也没有其他意思上的变化），为 true；否则为 false。",
        )
    )


@chinese_doc("对一个改写的检查。")
class ParaphraseCheck(BaseModel):
    """A check of one rewording of an answer that was faithful to its reference."""

    reasoning: str = Field(
        description=bilingual(
            "Any difference in meaning between the rewording and the original answer, and any claim of the "
            "rewording the reference does not support; say so if there is none.",
            "改写与原回答在意思上的任何差别，以及改写中参考资料不支持的任何说法；没有就说没有。",
        )
    )
    same_meaning: bool = Field(
        description=bilingual(
            "true if the rewording says what the original answer says: nothing added, left out or changed in meaning.",
            "如果改写与原回答意思相同（没有增加、遗漏或改变任何意思），为 true。",
        )
    )
    supported: bool = Field(
        description=bilingual(
            "true if the reference states or directly entails everything the rewording says.",
            "如果参考资料陈述了或能直接推出改写所说的全部内容，为 true。",
        )
    )


@chinese_doc("对一个回答是否忠实于参考资料的检查。")
class AnswerCheck(BaseModel):
    """A check that an answer is faithful to its reference."""

    reasoning: str = Field(
        description=bilingual(
            "Each claim of the answer the reference does not support or contradicts, with a few words on why; say "
            "so if there is none.",
            "回答中每一处参考资料不支持或与之矛盾的说法，并简述原因；没有就说没有。",
        )
    )
    supported: bool = Field(
        description=bilingual(
            "true if the reference states or directly entails everything the answer says.",
            "如果参考资料陈述了或能直接推出回答所说的全部内容，为 true。",
        )
    )
