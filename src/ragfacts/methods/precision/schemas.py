"""What each precision stage asks the model for: pydantic schemas whose descriptions are instructions.

Field order is reasoning order (points, quotes and checks first, the verdict last), because the model
writes the fields in that order. Descriptions are written in English and Chinese (`ragfacts.methods.bilingual`),
so a Chinese prompt is not followed by English rules.
"""

from __future__ import annotations

from typing import Literal

from pydantic import BaseModel, Field, field_validator

from ragfacts.methods.bilingual import bilingual, chinese_doc
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

chinese_doc("Face4RAG 错误类型的缩写。")(ErrorType)

_ERROR_TYPE = bilingual(
    "If the verdict is inconsistent: the error type that best describes the main problem; null if consistent.\n"
    + typology_text("en"),
    "若结论为 inconsistent：最能概括主要问题的错误类型；若一致则为 null。\n" + typology_text("zh"),
)
_VERDICT = bilingual(
    'The verdict, decided last: "consistent" or "inconsistent".',
    '最后给出的结论："consistent"（一致）或 "inconsistent"（不一致）。',
)


def _nonblank(items: list[str]) -> list[str]:
    kept = [item.strip() for item in items if item.strip()]
    if not kept:
        raise ValueError("give at least one non-empty item")
    return kept


@chinese_doc("一个回答按逻辑保留原则切分出的片段。")
class Decomposition(BaseModel):
    """An answer split into logic-preserving segments."""

    segments: list[str] = Field(
        min_length=1,
        description=bilingual(
            "The answer's segments in their original order. Keep sentences with a strong semantic or logical "
            "connection together; replace pronouns with what they refer to; otherwise keep the original wording "
            "and sentence structure.",
            "按原文顺序排列的回答片段。语义或逻辑联系紧密的句子放在同一片段；把代词替换为其所指；除此之外保持原文用词和句式。",
        ),
    )

    @field_validator("segments")
    @classmethod
    def _drop_blank(cls, value: list[str]) -> list[str]:
        return _nonblank(value)


@chinese_doc("把回答拆成的原子陈述（常规拆分）。")
class AtomicStatements(BaseModel):
    """An answer split into atomic statements (conventional decomposition)."""

    statements: list[str] = Field(
        min_length=1,
        description=bilingual(
            "One statement per fact: each sentence or claim of the answer broken into short, self-contained "
            "statements, with pronouns replaced by what they refer to.",
            "每条陈述只含一个事实：把回答中的每个句子或论断拆成简短、可独立理解的陈述，并把代词替换为其所指。",
        ),
    )

    @field_validator("statements")
    @classmethod
    def _drop_blank(cls, value: list[str]) -> list[str]:
        return _nonblank(value)


@chinese_doc("片段中的一个信息点及其核查。")
class PointCheck(BaseModel):
    """One informational point of a segment, located in the reference and checked."""

    point: str = Field(
        description=bilingual(
            "One informational point the segment asserts: an entity, number, date, attribute, event or relation.",
            "片段所断言的一个信息点：一个实体、数字、日期、属性、事件或关系。",
        )
    )
    reference_quote: str = Field(
        description=bilingual(
            "The passage of the reference this point corresponds to, copied verbatim; join separate passages "
            "with ' … '; empty if the reference has no such passage.",
            "与该信息点对应的参考资料原文，逐字照抄；多处原文用“ … ”连接；参考资料中没有对应内容则留空。",
        )
    )
    check: str = Field(
        description=bilingual(
            "Compare the point with the quoted passage only: what matches and what differs or is missing.",
            "只把该信息点与所引原文比较：哪些一致，哪些不同或缺失。",
        )
    )
    verdict: Verdict = Field(
        description=bilingual(
            '"consistent" only if the passage states or directly entails the point.',
            '只有当原文明确陈述或直接蕴含该信息点时才为 "consistent"。',
        )
    )


@chinese_doc("一个片段的事实一致性检查（逐步推理）。")
class FactCheck(BaseModel):
    """The fact-consistency check of one segment, step by step."""

    points: list[PointCheck] = Field(
        min_length=1,
        description=bilingual(
            "Every informational point of the segment, each with its reference passage and check; together they "
            "cover the whole segment.",
            "片段中的全部信息点，每个都附上对应原文和核查；合起来覆盖整个片段。",
        ),
    )
    error_type: ErrorType | None = Field(description=_ERROR_TYPE)
    verdict: Verdict = Field(
        description=bilingual(
            '"consistent" if and only if every point is consistent.',
            '当且仅当每个信息点都一致时为 "consistent"。',
        )
    )


@chinese_doc("一个片段事实一致性的直接结论（无推理过程）。")
class FactVerdict(BaseModel):
    """A direct fact-consistency verdict for one segment, without reasoning."""

    error_type: ErrorType | None = Field(description=_ERROR_TYPE)
    verdict: Verdict = Field(description=_VERDICT)


@chinese_doc("一个逻辑关系：连接词、关系类型及其连接的成分。")
class LogicalLink(BaseModel):
    """One logical connection: its connective, its type, the parts it connects."""

    connective: str = Field(
        description=bilingual(
            'The word or phrase expressing the relation (e.g. because, so, if, only if, such as, all); "(implicit)" '
            "if the relation is not stated by a word.",
            "表达该关系的词语（如 因为、所以、如果、只有……才、例如、所有）；若没有明示的词语则填“(隐含)”。",
        )
    )
    relation: LogicalRelation = Field(description=bilingual("The type of the relation.", "关系类型。"))
    components: list[str] = Field(
        description=bilingual(
            "The parts it connects, in logical order: cause then effect, condition then result, whole then part, "
            "specific case then general claim.",
            "它连接的成分，按逻辑顺序：先因后果、先条件后结果、先整体后部分、先具体情形后一般结论。",
        )
    )


@chinese_doc("一段文字的逻辑结构。")
class LogicalStructure(BaseModel):
    """The logical structure of a piece of text."""

    links: list[LogicalLink] = Field(
        description=bilingual(
            "Every logical connection in the text; empty if it only states facts side by side.",
            "文中的全部逻辑关系；若只是并列陈述事实则为空。",
        )
    )
    framework: str = Field(
        description=bilingual(
            "The whole logical framework in one sentence.",
            "用一句话概括整体逻辑框架。",
        )
    )


@chinese_doc("一个片段的逻辑一致性检查（逐步推理）。")
class LogicCheck(BaseModel):
    """The logic-consistency check of one segment, step by step."""

    reference_context: str = Field(
        description=bilingual(
            "The passage(s) of the reference the segment draws on, copied verbatim; join separate passages with "
            "' … '; empty if there is none.",
            "片段所依据的参考资料原文，逐字照抄；多处原文用“ … ”连接；没有则留空。",
        )
    )
    segment_structure: LogicalStructure = Field(
        description=bilingual("The logical structure of the segment.", "片段的逻辑结构。")
    )
    reference_structure: LogicalStructure = Field(
        description=bilingual("The logical structure of that reference passage.", "所引参考资料原文的逻辑结构。")
    )
    comparison: str = Field(
        description=bilingual(
            "Compare the two structures: same relations between the same parts, or what was added, reversed, "
            "widened or changed.",
            "比较两个结构：相同成分之间的关系是否相同，或有何增加、颠倒、扩大或改变。",
        )
    )
    error_type: ErrorType | None = Field(description=_ERROR_TYPE)
    verdict: Verdict = Field(
        description=bilingual(
            '"consistent" if the segment keeps the logical structure of the reference.',
            '若片段保持了参考资料的逻辑结构则为 "consistent"。',
        )
    )


@chinese_doc("一个片段逻辑一致性的直接结论（无推理过程）。")
class LogicVerdict(BaseModel):
    """A direct logic-consistency verdict for one segment, without reasoning."""

    error_type: ErrorType | None = Field(description=_ERROR_TYPE)
    verdict: Verdict = Field(description=_VERDICT)


@chinese_doc("对整个回答与参考资料是否一致的整体判断。")
class HolisticJudgement(BaseModel):
    """One judgement of the whole answer against the reference."""

    problems: list[str] = Field(
        description=bilingual(
            "Each claim of the answer the reference does not support or contradicts, quoted from the answer, with "
            "a few words on why; empty if there is none.",
            "回答中每一处参考资料不支持或与之矛盾的说法，引用回答原文并简述原因；没有则为空。",
        )
    )
    verdict: Verdict = Field(
        description=bilingual(
            '"consistent" if and only if there is no problem.',
            '当且仅当没有任何问题时为 "consistent"。',
        )
    )


@chinese_doc("对整个回答的直接结论（无推理过程）。")
class HolisticVerdict(BaseModel):
    """A direct verdict on the whole answer, without reasoning."""

    verdict: Verdict = Field(description=_VERDICT)
