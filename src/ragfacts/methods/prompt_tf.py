"""The Prompt(T/F) baseline: one plain-text call per fact, the verdict read from the reply's words.

The paper reads a reply as True when "true" occurs anywhere in it (case-insensitive), else False when
"false" occurs, else as not answered (N/A). That reads "not true" and "untrue" as True; `parsing="faithful"`
keeps this to reproduce the paper, `parsing="corrected"` understands negation and ignores an echoed
"True or False". Registered as the method "prompt-tf".
"""

from __future__ import annotations

import asyncio
import re
from collections.abc import Sequence
from typing import Literal

from pydantic import BaseModel, ConfigDict, Field

from ragfacts.methods.base import method
from ragfacts.methods.prompting import estimate
from ragfacts.methods.recall import Lang, RecallMethod
from ragfacts.methods.verdicts import FactVerdict, Verification
from ragfacts.models import ChatModel, Message
from ragfacts.prompts import load_prompt
from ragfacts.text import delimit, detect_lang
from ragfacts.usage import Usage

Parsing = Literal["faithful", "corrected"]
STAGE = "prompt_tf"
METHOD = "prompt-tf"

_ECHO = re.compile(r"\btrue\s*(?:or|/)\s*false\b|true\s*还是\s*false", re.IGNORECASE)
_VERDICT = re.compile(
    r"(?P<neg>(?:\bnot|n['’]t)\s+)?\b(?P<word>true|false|untrue)\b|(?P<zh>不正确|正确|错误)", re.IGNORECASE
)


def read_verdict(text: str | None, parsing: Parsing = "faithful") -> bool | None:
    """Return True/False read from a reply, or None when it states neither (the paper's N/A)."""
    if not text:
        return None
    lowered = text.casefold()
    if parsing == "faithful":
        if "true" in lowered:
            return True
        if "false" in lowered:
            return False
        return None
    if parsing != "corrected":
        raise ValueError(f"unknown parsing {parsing!r}: use 'faithful' or 'corrected'")
    # The first verdict wins: replies lead with their answer and then explain it.
    match = _VERDICT.search(_ECHO.sub(" ", lowered))
    if match is None:
        return None
    if match.group("zh"):
        return match.group("zh") == "正确"
    word = match.group("word")
    if word == "untrue":
        return False
    return (word == "true") != bool(match.group("neg"))


async def verify_facts_by_prompt(
    model: ChatModel,
    facts: Sequence[str],
    passage: str,
    parsing: Parsing = "faithful",
    lang: str | None = None,
) -> Verification:
    """Verify each fact against `passage` with its own plain-text call; no schema is sent."""
    if parsing not in ("faithful", "corrected"):
        raise ValueError(f"unknown parsing {parsing!r}: use 'faithful' or 'corrected'")
    facts = list(facts)
    lang = lang or detect_lang(f"{passage} {' '.join(facts)}")
    template = load_prompt("prompt_tf", lang)
    completions = await asyncio.gather(
        *(
            model.complete(
                [
                    Message(
                        role="user",
                        content=template.render(passage=delimit("passage", passage), claim=delimit("claim", fact)),
                    )
                ],
                None,
                stage=STAGE,
                prompt_version=template.id,
                lang=lang,
            )
            for fact in facts
        )
    )
    result = Verification(method=METHOD, lang=lang, config={"parsing": parsing})
    for index, (fact, completion) in enumerate(zip(facts, completions, strict=True)):
        result.completions.append(completion.record())
        if completion.failure is not None:
            result.failures.append(completion.failure)
            result.verdicts.append(
                FactVerdict(index=index, fact=fact, unscored="failed", failure=completion.failure.message)
            )
            continue
        verdict = read_verdict(completion.text, parsing)
        result.verdicts.append(
            FactVerdict(
                index=index,
                fact=fact,
                verdict=verdict,
                raw=completion.text,
                unscored="no_verdict" if verdict is None else None,
            )
        )
    return result


class PromptTFOptions(BaseModel):
    """How the Prompt(T/F) baseline reads its replies, and in which language it asks."""

    model_config = ConfigDict(extra="forbid", frozen=True)

    parsing: Parsing = Field(
        "faithful",
        description='faithful: the paper\'s rule ("true" anywhere means True, so "not true" is True); '
        'corrected: negation-aware, an echoed "True or False" ignored',
    )
    lang: Lang = Field("auto", description="prompt language; auto = detected from the answer and the facts")


@method("prompt-tf")
class PromptTF(RecallMethod[PromptTFOptions]):
    """The FaaF paper's Prompt(T/F) baseline: one plain-text call per fact."""

    Options = PromptTFOptions
    description = "the FaaF paper's baseline: one plain-text True/False question per fact, the verdict read from words"
    prompts = ("generate_facts", "prompt_tf")

    async def verify(self, model: ChatModel, facts: list[str], answer: str, lang: str | None) -> Verification:
        return await verify_facts_by_prompt(model, facts, answer, self.options.parsing, lang)

    def estimate_verification(self, model: ChatModel, facts: list[str], answer: str, lang: str) -> Usage:
        """One plain-text call per fact, about 30 tokens a reply."""
        return Usage.sum(
            estimate(model, "prompt_tf", None, lang, 30, question=None, passage=answer, claim=fact) for fact in facts
        )
