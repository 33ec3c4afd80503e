"""Facts as a Function (FaaF): a passage's facts verified in one structured call, one enum field per fact.

The fact sheet is a reply schema made per call (`fact_sheet`): field `fact_i` has the fact as its title and the
instruction as its description; with citations, a `citation_i` field asking for the supporting excerpt
comes first, so the model looks for evidence before it judges. The pydantic model that validates it is made once
per number of facts, mode and language; the facts enter the JSON schema sent and the validation context. In the
three-way variant the parser maps "Not clear from the given passage" to False and keeps the raw value. Registered
as the method "faaf".
"""

from __future__ import annotations

import asyncio
import re
from collections.abc import Sequence
from functools import lru_cache
from typing import TYPE_CHECKING, Any, ClassVar, Literal

from pydantic import BaseModel, ConfigDict, Field, ValidationInfo, create_model, model_validator

from ragfacts.methods.base import method
from ragfacts.methods.prompting import estimate, reask_wording
from ragfacts.methods.recall import Lang, RecallMethod, RecallResult, recall
from ragfacts.methods.verdicts import FactVerdict, Verification
from ragfacts.models import ChatModel, Completion, ConfigurationError, Message
from ragfacts.models.structured import Shaped, json_schema_of
from ragfacts.prompts import load_prompt
from ragfacts.text import delimit, detect_lang, neutralise_tags, normalise, quote_found
from ragfacts.usage import Usage

if TYPE_CHECKING:  # numpy: imported where a head verifies, not with every method
    from ragfacts.methods.precision.head import Head

__all__ = [
    "FALSE",
    "NOT_CLEAR",
    "TRUE",
    "FaaF",
    "FaaFOptions",
    "FactSheet",
    "FactVerdict",
    "RecallResult",
    "Verification",
    "faaf_method_name",
    "fact_sheet",
    "recall",
    "verify_facts",
]

TRUE = "True"
FALSE = "False"
NOT_CLEAR = "Not clear from the given passage"
Mode = Literal["tf", "tfn"]
STAGE = "faaf"

_VALUES: dict[str, tuple[str, ...]] = {"tf": (TRUE, FALSE), "tfn": (TRUE, FALSE, NOT_CLEAR)}
_TYPES: dict[str, Any] = {
    "tf": Literal["True", "False"],
    "tfn": Literal["True", "False", "Not clear from the given passage"],
}
_KEY = re.compile(r"^\s*(fact|citation)[\s_\-]*(\d+)\s*$", re.IGNORECASE)


class FactSheet(BaseModel):
    """Base of every generated fact sheet: tolerant of key spellings, value casing and one wrapper level."""

    allowed_values: ClassVar[tuple[str, ...]] = ()

    @model_validator(mode="before")
    @classmethod
    def _normalise_reply(cls, data: Any, info: ValidationInfo) -> Any:
        # the facts' own texts, by which a model may key its verdicts: the call's, in the validation context
        facts: dict[str, str] = (info.context or {}).get("fact_fields", {})
        data = _unwrap(data, cls, facts)
        if not isinstance(data, dict):
            return data
        cleaned: dict[str, Any] = {}
        for key, value in data.items():
            name = _field_name(str(key), cls, facts)
            if name.startswith("fact_"):
                value = _verdict_value(value, cls.allowed_values)
            cleaned.setdefault(name, value)
        return cleaned


def fact_sheet(facts: Sequence[str], mode: Mode = "tfn", citations: bool = False, lang: str = "en") -> Shaped:
    """The reply schema of one FaaF call: a verdict field per fact, titled with the fact (and a citation field
    before each); the validating model is made once per shape, the facts go into its JSON schema and context."""
    if mode not in _VALUES:
        raise ValueError(f"unknown FaaF mode {mode!r}: use 'tf' or 'tfn'")
    sheet = _sheet_model(len(facts), mode, citations, lang)
    schema = json_schema_of(sheet)
    # The fact is untrusted text (written from a ground truth) and a schema shown in a prompt carries its titles:
    # its prompt tags are neutralised there as in every delimited text.
    titles = {f"fact_{index}": neutralise_tags(fact) for index, fact in enumerate(facts)}
    properties = {
        name: {**prop, "title": titles[name]} if name in titles else prop for name, prop in schema["properties"].items()
    }
    fields = {normalise(fact): f"fact_{index}" for index, fact in enumerate(facts)}
    return Shaped(sheet, {**schema, "properties": properties}, {"fact_fields": fields})


@lru_cache(maxsize=256)
def _sheet_model(count: int, mode: Mode, citations: bool, lang: str) -> type[FactSheet]:
    """The FactSheet subclass of `count` verdict fields (and a citation field before each)."""
    verdict_doc = load_prompt(f"verify_facts_{mode}", lang).render().strip()
    citation_doc = load_prompt("verify_facts_citation", lang)
    fields: dict[str, Any] = {}
    for index in range(count):
        if citations:
            fields[f"citation_{index}"] = (str, Field(description=citation_doc.render(field=f"fact_{index}").strip()))
        fields[f"fact_{index}"] = (_TYPES[mode], Field(description=verdict_doc))
    sheet: type[FactSheet] = create_model("FactChecker", __base__=FactSheet, **fields)
    sheet.allowed_values = _VALUES[mode]
    return sheet


def faaf_method_name(mode: Mode, citations: bool) -> str:
    """The paper's name for a configuration, e.g. "faaf-tfn+citation"."""
    return f"faaf-{mode}" + ("+citation" if citations else "")


async def verify_facts(
    model: ChatModel,
    facts: Sequence[str],
    passage: str,
    mode: Mode = "tfn",
    citations: bool = False,
    chunk_size: int | None = None,
    lang: str | None = None,
) -> Verification:
    """Verify `facts` against `passage` in one call per chunk of `chunk_size` facts (None: one call for all)."""
    if mode not in _VALUES:
        raise ValueError(f"unknown FaaF mode {mode!r}: use 'tf' or 'tfn'")
    if chunk_size is not None and chunk_size < 1:
        raise ValueError("chunk_size must be at least 1 (or None for one call per passage)")
    facts = list(facts)
    lang = lang or detect_lang(f"{passage} {' '.join(facts)}")
    size = chunk_size or max(len(facts), 1)
    starts = range(0, len(facts), size)
    outcomes = await asyncio.gather(
        *(_verify_chunk(model, facts[start : start + size], start, passage, mode, citations, lang) for start in starts)
    )
    result = Verification(
        method=faaf_method_name(mode, citations),
        lang=lang,
        config={"mode": mode, "citations": citations, "chunk_size": chunk_size},
    )
    for verdicts, completion in outcomes:
        result.verdicts.extend(verdicts)
        result.completions.append(completion.record())
        if completion.failure is not None:
            result.failures.append(completion.failure)
    return result


async def _verify_chunk(
    model: ChatModel, chunk: list[str], offset: int, passage: str, mode: Mode, citations: bool, lang: str
) -> tuple[list[FactVerdict], Completion]:
    sheet = fact_sheet(chunk, mode, citations, lang)
    template = load_prompt("verify_facts", lang)
    field_prompts = [load_prompt(f"verify_facts_{mode}", lang).id]
    if citations:
        field_prompts.append(load_prompt("verify_facts_citation", lang).id)
    completion = await model.complete(
        [Message(role="user", content=template.render(passage=delimit("passage", passage)))],
        sheet,
        stage=STAGE,
        prompt_version="+".join([template.id, *field_prompts]),
        lang=lang,
        reask=reask_wording(lang),
    )
    if not completion.ok:
        message = completion.failure.message if completion.failure else "no reply"
        verdicts = [
            FactVerdict(index=offset + i, fact=fact, unscored="failed", failure=message) for i, fact in enumerate(chunk)
        ]
        return verdicts, completion
    verdicts = []
    for i, fact in enumerate(chunk):
        raw = getattr(completion.parsed, f"fact_{i}")
        citation = getattr(completion.parsed, f"citation_{i}") if citations else None
        verdicts.append(
            FactVerdict(
                index=offset + i,
                fact=fact,
                verdict=raw == TRUE,  # "False" and "Not clear from the given passage" both reject the fact
                raw=raw,
                citation=citation,
                citation_match=quote_found(citation, passage) if citation else None,
            )
        )
    return verdicts, completion


class FaaFOptions(BaseModel):
    """How FaaF verifies: the verdict values, citations, facts per call, prompt language."""

    model_config = ConfigDict(extra="forbid", frozen=True)

    mode: Mode = Field("tfn", description="tf: True/False; tfn: True/False/Not clear from the given passage")
    citations: bool = Field(False, description="ask for the supporting excerpt of the answer before each verdict")
    chunk_size: int = Field(
        0,
        ge=0,
        description="facts per call; 0 = all facts of an answer in one call. Measured on the embedded 1.5B model "
        "(benchmarks/results/faaf_chunk_size.json): smaller chunks cost more calls and did not make the judgements "
        "noticeably stricter, so all-in-one is the default",
    )
    lang: Lang = Field("auto", description="prompt language; auto = detected from the answer and the facts")
    verify: Literal["auto", "function", "head"] = Field(
        "auto",
        description="how the facts are verified: function = FaaF's structured call (the paper's method); head = "
        "the trained head's P(the answer states the fact), one forward pass a fact sharing the answer's KV "
        "prefix, nothing generated, a fact whose number, date or name the answer lacks absent (a local model a "
        "head ships for); auto = head where a head ships for the model, else function",
    )


@method("faaf")
class FaaF(RecallMethod[FaaFOptions]):
    """Recall by Facts as a Function: all facts of an answer in one structured call, one enum field per fact."""

    Options = FaaFOptions
    description = "Facts as a Function: facts from the ground truth, verified in one structured call, one enum per fact"
    prompts = ("generate_facts", "verify_facts", "verify_facts_tf", "verify_facts_tfn", "verify_facts_citation")

    def resolved(self, model: ChatModel) -> FaaF:
        """`verify=auto` decided for `model`: the head where one ships for it (a local GGUF), else the function."""
        if self.options.verify == "head":
            _required_head(model)  # refused up front, naming what would do
        if self.options.verify != "auto":
            return self
        verify = "head" if _head_of(model) is not None else "function"
        return FaaF(self.options.model_copy(update={"verify": verify}), spec=self.spec)

    def uses_label_scores(self, model: ChatModel) -> bool:
        return self.options.verify != "function" and _head_of(model) is not None

    def configuration(self, model: ChatModel) -> dict[str, Any]:
        """The method's configuration; verified by the head, the head's weights and recall thresholds count too."""
        configuration = super().configuration(model)
        if self.options.verify == "head":
            head = _required_head(model)
            configuration = {**configuration, "head": head.digest, "recall": head.recall}
        return configuration

    async def verify(self, model: ChatModel, facts: list[str], answer: str, lang: str | None) -> Verification:
        o = self.options
        if o.verify == "head" or (o.verify == "auto" and _head_of(model) is not None):
            from ragfacts.methods.fact_head import verify_by_head

            return await verify_by_head(model, _required_head(model), facts, answer, lang, self.name)
        return await verify_facts(model, facts, answer, o.mode, o.citations, o.chunk_size or None, lang)

    def estimate_verification(self, model: ChatModel, facts: list[str], answer: str, lang: str) -> Usage:
        """One call per chunk of facts: the fact sheet as its schema, about 10 tokens a verdict (40 with citation);
        verified by the head, one forward pass a fact, nothing generated."""
        o = self.options
        if o.verify == "head" or (o.verify == "auto" and _head_of(model) is not None):
            return Usage.sum(
                estimate(model, "holistic_score", None, lang, 1, question=None, reference=answer, answer=fact)
                for fact in facts
            )
        size = o.chunk_size or max(len(facts), 1)
        per_fact = 40 if o.citations else 10
        return Usage.sum(
            estimate(
                model,
                "verify_facts",
                fact_sheet(chunk, o.mode, o.citations, lang),
                lang,
                5 + per_fact * len(chunk),
                question=None,
                passage=answer,
            )
            for chunk in (facts[start : start + size] for start in range(0, len(facts), size))
        )


def _head_of(model: ChatModel) -> Head | None:
    """The head shipped for `model` (known by the SHA-256 of its weights), where the model gives what it reads."""
    profile = model.profile()
    if profile.sha256 is None:
        return None
    from ragfacts.methods.precision.head import shipped_head

    head = shipped_head(profile.sha256)
    return head if head is not None and (profile.hidden_state or not head.uses_state) else None


def _required_head(model: ChatModel) -> Head:
    head = _head_of(model)
    if head is None:
        raise ConfigurationError(
            "faaf:verify=head needs a model a trained head ships for (the embedded model, --model local); this "
            "model has none: use verify=function (FaaF's structured call)"
        )
    return head


def _unwrap(data: Any, sheet: type[FactSheet], facts: dict[str, str]) -> Any:
    """Take the object out of a one-item list or a single wrapper key such as {"FactChecker": {...}}."""
    if isinstance(data, list) and len(data) == 1:
        data = data[0]
    if isinstance(data, dict) and len(data) == 1:
        ((key, inner),) = data.items()
        if isinstance(inner, dict) and _field_name(str(key), sheet, facts) not in sheet.model_fields:
            return inner
    return data


def _field_name(key: str, sheet: type[FactSheet], facts: dict[str, str]) -> str:
    """Map "fact 0", "Fact_0", "fact0", "FACT-0" (or the fact's own text, normalised, in `facts`) to "fact_0"."""
    if key in sheet.model_fields:
        return key
    match = _KEY.match(key)
    if match:
        return f"{match.group(1).lower()}_{int(match.group(2))}"
    return facts.get(normalise(key), key)


def _verdict_value(value: Any, allowed: tuple[str, ...]) -> Any:
    """Canonical spelling of a verdict (true -> "True", "not clear" -> the three-way value); else unchanged."""
    if isinstance(value, bool):
        return TRUE if value else FALSE
    if not isinstance(value, str):
        return value
    folded = value.strip().strip(".\"'").casefold()
    for option in allowed:
        if folded == option.casefold():
            return option
    if NOT_CLEAR in allowed and folded.startswith("not clear"):
        return NOT_CLEAR
    return value
