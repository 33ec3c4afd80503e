"""The Face4RAG error typology: three classes, nine error types, plus "other" buckets.

The codes are the paper's abbreviations (§3.1, Table 10), so results line up with the benchmark's
annotations; names and definitions are our own words, in Chinese and English, for prompts and reports: they
are model-facing text, so they live in prompts/<lang>/schemas.toml (`typology.<TYPE>.name` and `.definition`).
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from enum import Enum
from types import MappingProxyType

from ragfacts.prompts import schema_texts


class ErrorClass(str, Enum):
    """The three error classes of the typology, plus errors outside it."""

    HALLUCINATION = "hallucination"
    KNOWLEDGE = "knowledge"
    LOGICAL_FALLACY = "logical_fallacy"
    OTHER = "other"


class ErrorType(str, Enum):
    # A Face4RAG error type, by the paper's abbreviation; the description the model sees is in schemas.toml.
    __doc__ = schema_texts("en")[1]["precision.ErrorType.doc"]

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


def _row(error_type: ErrorType, error_class: ErrorClass) -> tuple[ErrorType, ErrorTypeInfo]:
    """One type's row, its names and definitions read from prompts/<lang>/schemas.toml (`typology.<TYPE>.*`)."""
    en, zh = schema_texts("en")[1], schema_texts("zh")[1]
    key = f"typology.{error_type.name}"
    return error_type, ErrorTypeInfo(
        error_type,
        error_class,
        en[f"{key}.name"],
        zh[f"{key}.name"],
        en[f"{key}.definition"],
        zh[f"{key}.definition"],
    )


TYPOLOGY: MappingProxyType[ErrorType, ErrorTypeInfo] = MappingProxyType(
    dict(
        [
            _row(ErrorType.HALLUCINATION, ErrorClass.HALLUCINATION),
            _row(ErrorType.CONTRADICTION, ErrorClass.KNOWLEDGE),
            _row(ErrorType.ENTITY_INVERSION, ErrorClass.KNOWLEDGE),
            _row(ErrorType.CONFLATION, ErrorClass.KNOWLEDGE),
            _row(ErrorType.CONCEPTUAL_SUBSTITUTION, ErrorClass.KNOWLEDGE),
            _row(ErrorType.OVERGENERALIZATION, ErrorClass.LOGICAL_FALLACY),
            _row(ErrorType.CAUSAL_CONFUSION, ErrorClass.LOGICAL_FALLACY),
            _row(ErrorType.CONDITION_CONFUSION, ErrorClass.LOGICAL_FALLACY),
            _row(ErrorType.INCLUSION_RELATION, ErrorClass.LOGICAL_FALLACY),
            _row(ErrorType.OTHER_LOGICAL_FALLACY, ErrorClass.LOGICAL_FALLACY),
            _row(ErrorType.OTHER, ErrorClass.OTHER),
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


def named(code: str | ErrorType) -> str:
    """An error type's code with its English name, e.g. "KConf. conflation"; an unknown label as it is."""
    known = code if isinstance(code, ErrorType) else parse_error_type(code)
    return f"{known.value} {known.info.name_en}" if known is not None else str(code)
