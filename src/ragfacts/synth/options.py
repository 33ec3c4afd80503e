"""What `ragfacts synth` makes of each row: which error types, how many positives, whether each is verified."""

from __future__ import annotations

from collections.abc import Iterable
from typing import Any, Literal

from pydantic import BaseModel, ConfigDict, Field, field_validator

from ragfacts.typology import ErrorType, parse_error_type

# The typology's nine types (Face4RAG §3.1); LOthe. can be asked for too, "Other" has no recipe.
NINE_TYPES: tuple[ErrorType, ...] = tuple(
    t for t in ErrorType if t not in (ErrorType.OTHER_LOGICAL_FALLACY, ErrorType.OTHER)
)
INJECTABLE: tuple[ErrorType, ...] = (*NINE_TYPES, ErrorType.OTHER_LOGICAL_FALLACY)


class SynthOptions(BaseModel):
    """The options of a synthesis run, declared once: the CLI's flags and the manifest come from here."""

    model_config = ConfigDict(extra="forbid", frozen=True)

    types: tuple[ErrorType, ...] = Field(
        NINE_TYPES,
        description="error types to inject, one flawed answer per type and row: codes or names, comma-separated "
        "(default: the nine types of the typology; LOthe. may be added)",
    )
    positives: int = Field(
        1, ge=0, le=10, description="paraphrases of the faithful answer per row, kept as positives beside it"
    )
    verify: bool = Field(
        True,
        description="check every candidate with a second call and keep only the edits that carry their error type "
        "and nothing else, and the paraphrases that stay faithful",
    )
    lang: Literal["auto", "zh", "en"] = Field(
        "auto", description="prompt language; auto = detected per row from its answer (or its reference)"
    )

    @field_validator("types", mode="before")
    @classmethod
    def _known_types(cls, value: Any) -> tuple[ErrorType, ...]:
        return parse_types(value)


def parse_types(value: str | Iterable[Any]) -> tuple[ErrorType, ...]:
    """Error types from "KCont.,hallucination,因果混淆错误" or a list; "all" = the nine; raises ValueError."""
    names = [part for part in value.split(",")] if isinstance(value, str) else list(value)
    names = [n.strip() if isinstance(n, str) else n for n in names]
    if [n for n in names if n] == ["all"]:
        return NINE_TYPES
    chosen: list[ErrorType] = []
    for name in names:
        if name == "":
            continue
        found = name if isinstance(name, ErrorType) else parse_error_type(str(name))
        if found is None or found not in INJECTABLE:
            why = "has no recipe" if found is ErrorType.OTHER else "is not an error type"
            raise ValueError(f"{name!r} {why}; types: {', '.join(t.value for t in INJECTABLE)} (or all)")
        if found not in chosen:
            chosen.append(found)
    if not chosen:
        raise ValueError(f"no error type given; types: {', '.join(t.value for t in INJECTABLE)} (or all)")
    return tuple(chosen)


def type_slug(error_type: ErrorType) -> str:
    """The type's name in file and id form: "contradiction", "causal_confusion"."""
    return error_type.name.lower()
