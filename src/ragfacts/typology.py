"""The Face4RAG error typology: three classes, nine error types, plus "other" buckets.

The codes are the paper's abbreviations (§3.1, Table 10), so results line up with the benchmark's
annotations; names and definitions are our own words, in Chinese and English, for prompts and reports.
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from enum import Enum
from types import MappingProxyType


class ErrorClass(str, Enum):
    """The three error classes of the typology, plus errors outside it."""

    HALLUCINATION = "hallucination"
    KNOWLEDGE = "knowledge"
    LOGICAL_FALLACY = "logical_fallacy"
    OTHER = "other"


class ErrorType(str, Enum):
    """A Face4RAG error type, by the paper's abbreviation."""

    HALLUCINATION = "Hallu."
    CONTRADICTION = "KCont."
    ENTITY_INVERSION = "KInve."
    CONFLATION = "KConf."
    CONCEPTUAL_SUBSTITUTION = "KConc."
    OVERGENERALIZATION = "LOver."
    CAUSAL_CONFUSION = "LCaus."
    CONDITION_CONFUSION = "LConf."
    INCLUSION_RELATION = "LIncl."
    OTHER_LOGICAL_FALLACY = "LOthe."
    OTHER = "Other"

    @property
    def info(self) -> ErrorTypeInfo:
        return TYPOLOGY[self]


@dataclass(frozen=True)
class ErrorTypeInfo:
    """One row of the typology table."""

    error_type: ErrorType
    error_class: ErrorClass
    name_en: str
    name_zh: str
    definition_en: str
    definition_zh: str

    def name(self, lang: str) -> str:
        return self.name_zh if lang == "zh" else self.name_en

    def definition(self, lang: str) -> str:
        return self.definition_zh if lang == "zh" else self.definition_en


def _row(
    error_type: ErrorType, error_class: ErrorClass, name_en: str, name_zh: str, definition_en: str, definition_zh: str
) -> tuple[ErrorType, ErrorTypeInfo]:
    return error_type, ErrorTypeInfo(error_type, error_class, name_en, name_zh, definition_en, definition_zh)


TYPOLOGY: MappingProxyType[ErrorType, ErrorTypeInfo] = MappingProxyType(
    dict(
        [
            _row(
                ErrorType.HALLUCINATION,
                ErrorClass.HALLUCINATION,
                "hallucination",
                "幻觉错误",
                "the answer asserts something the reference does not support: it is absent from the reference or "
                "cannot be verified from it, even if it happens to be true",
                "回答包含参考资料中找不到依据的信息：参考资料未提及或无法据此核实，即使它碰巧是真的",
            ),
            _row(
                ErrorType.CONTRADICTION,
                ErrorClass.KNOWLEDGE,
                "contradiction",
                "矛盾错误",
                "the answer states the opposite of, or something incompatible with, what the reference says",
                "回答的说法与参考资料相反或互不相容",
            ),
            _row(
                ErrorType.ENTITY_INVERSION,
                ErrorClass.KNOWLEDGE,
                "entity inversion",
                "实体倒置错误",
                "two entities, values, events or stages of the reference swap places in the answer",
                "参考资料中的两个实体、数值、事件或阶段在回答中被互换了位置",
            ),
            _row(
                ErrorType.CONFLATION,
                ErrorClass.KNOWLEDGE,
                "conflation",
                "混淆错误",
                "separate subjects, actions or objects of the reference are merged so that each seems to have the "
                "properties of the other",
                "把参考资料中各自独立的主体、行为或对象捏合在一起，使它们看似共同具有彼此的属性",
            ),
            _row(
                ErrorType.CONCEPTUAL_SUBSTITUTION,
                ErrorClass.KNOWLEDGE,
                "conceptual substitution",
                "偷换概念错误",
                "a term or concept of the reference is replaced by a different, often related, one",
                "参考资料中的某个词语或概念被替换成另一个不同的（常常是相近的）概念",
            ),
            _row(
                ErrorType.OVERGENERALIZATION,
                ErrorClass.LOGICAL_FALLACY,
                "overgeneralization",
                "以偏概全错误",
                "something the reference says of a specific case or subset is claimed for a wider group or category",
                "参考资料针对特定对象或部分情况的说法，被回答推广到更大的类别或全体",
            ),
            _row(
                ErrorType.CAUSAL_CONFUSION,
                ErrorClass.LOGICAL_FALLACY,
                "causal confusion",
                "因果混淆错误",
                "cause and effect are reversed, or a causal link is added between things the reference does not "
                "connect causally",
                "颠倒了因果关系，或在参考资料中并无因果联系的内容之间强加因果",
            ),
            _row(
                ErrorType.CONDITION_CONFUSION,
                ErrorClass.LOGICAL_FALLACY,
                "confusing sufficient and necessary conditions",
                "充分必要条件混淆错误",
                "a condition the reference presents as necessary (required, but not enough on its own) is presented "
                "as sufficient, or the other way round",
                "把参考资料中的必要条件（必须具备但单独不够）说成充分条件，或反过来",
            ),
            _row(
                ErrorType.INCLUSION_RELATION,
                ErrorClass.LOGICAL_FALLACY,
                "inclusion relation",
                "包含关系错误",
                "items the reference lists side by side, or relates in another way, are presented as one including "
                "the other (whole and part, category and example)",
                "参考资料中并列或有其他关系的内容，被回答说成一个包含另一个（整体与部分、类别与举例）",
            ),
            _row(
                ErrorType.OTHER_LOGICAL_FALLACY,
                ErrorClass.LOGICAL_FALLACY,
                "other logical fallacy",
                "其他逻辑谬误",
                "the logical relation in the answer conflicts with the reference in a way none of the logical types "
                "above describes",
                "回答中的逻辑关系与参考资料不符，但不属于以上任何一种逻辑错误",
            ),
            _row(
                ErrorType.OTHER,
                ErrorClass.OTHER,
                "other error",
                "其他错误",
                "an inconsistency that fits none of the types above",
                "不属于以上任何类型的不一致",
            ),
        ]
    )
)


def typology_text(lang: str) -> str:
    """The typology as a bulleted list, one line per type, for prompts and schema descriptions."""
    lines = [f"- {t.value} ({TYPOLOGY[t].name(lang)}): {TYPOLOGY[t].definition(lang)}" for t in ErrorType]
    return "\n".join(lines)


def _key(text: str) -> str:
    return re.sub(r"[\s._\-()（）]+", "", text).casefold()


def _aliases() -> dict[str, ErrorType]:
    aliases = {}
    for error_type, info in TYPOLOGY.items():
        for alias in (error_type.value, error_type.name, info.name_en, info.name_en + " error", info.name_zh):
            aliases[_key(alias)] = error_type
    aliases[_key("LOth.")] = ErrorType.OTHER_LOGICAL_FALLACY  # Table 7 spells it this way
    aliases[_key("Other Errors")] = ErrorType.OTHER  # Table 10
    return aliases


_ALIASES = _aliases()


def parse_error_type(label: str) -> ErrorType | None:
    """Map a dataset or human label ("KCont", "kcont.", "Contradiction Error", "矛盾错误") to an ErrorType."""
    return _ALIASES.get(_key(label)) if label.strip() else None
