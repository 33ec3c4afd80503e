"""Fact generation (the paper's LMf): short, independent facts that answer a question, from a ground truth."""

from __future__ import annotations

import json
import re
from collections.abc import Iterable
from typing import Any

from pydantic import BaseModel, Field

from ragfacts.methods.bilingual import in_language, schema_doc, schema_text
from ragfacts.methods.prompting import reask_wording
from ragfacts.models import ChatModel, Failure, FailureKind, Message
from ragfacts.prompts import load_prompt
from ragfacts.text import delimit, detect_lang, normalise

STAGE = "generate_facts"
# "- x", "• x", "1. x", "2) x", "3、x", "(4) x"; not "3.5 million" or "-5 degrees".
_LIST_MARKER = re.compile(r"^\s*(?:[-*•·](?!\d)\s*|\d{1,3}[.)]\s+|\d{1,3}、\s*|[(（]\d{1,3}[)）]\s*)")


class FactList(BaseModel):
    __doc__ = schema_doc("facts.FactList.doc")

    facts: list[str] = Field(description=schema_text("facts.FactList.facts"))


class GeneratedFacts(BaseModel):
    """Facts generated from a ground truth, with the completion records that produced them."""

    question: str | None
    ground_truth: str
    lang: str
    facts: list[str] = Field(default_factory=list)
    duplicates_removed: int = 0
    failure: Failure | None = None
    prompt_version: str | None = None
    completions: list[dict[str, Any]] = Field(default_factory=list)

    @property
    def ok(self) -> bool:
        return self.failure is None


async def generate_facts(
    model: ChatModel, question: str | None, ground_truth: str, lang: str | None = None
) -> GeneratedFacts:
    """Return the facts of `ground_truth` that answer `question`, deduplicated; a failure is recorded, not raised."""
    lang = lang or detect_lang(f"{question or ''} {ground_truth}")
    template = load_prompt("generate_facts", lang)
    prompt = template.render(
        question=delimit("question", question or ""), ground_truth=delimit("reference_answer", ground_truth)
    )
    completion = await model.complete(
        [Message(role="user", content=prompt)],
        in_language(FactList, lang),
        stage=STAGE,
        prompt_version=template.id,
        lang=lang,
        reask=reask_wording(lang),
    )
    result = GeneratedFacts(
        question=question,
        ground_truth=ground_truth,
        lang=lang,
        prompt_version=template.id,
        completions=[completion.record()],
        failure=completion.failure,
    )
    if completion.ok:
        result.facts, result.duplicates_removed = clean_facts(completion.parsed.facts)
        if not result.facts:
            # An empty list is schema-valid but useless: recall over zero facts means nothing.
            result.failure = Failure(
                kind=FailureKind.INVALID_OUTPUT, message="the model returned no facts", last_text=completion.text
            )
    return result


def clean_facts(items: Iterable[str]) -> tuple[list[str], int]:
    """Return the facts without list markers, blanks and duplicates (compared leniently), and the duplicates count."""
    facts: list[str] = []
    seen: set[str] = set()
    duplicates = 0
    for item in items:
        fact = _LIST_MARKER.sub("", str(item)).strip()
        key = normalise(fact)
        if not key:
            continue
        if key in seen:
            duplicates += 1
            continue
        seen.add(key)
        facts.append(fact)
    return facts, duplicates


def read_fact_list(text: str) -> list[str]:
    """Parse facts a user gives: a JSON list of strings, else one fact per line (list markers allowed).

    Raises ValueError when a JSON list holds something other than strings.
    """
    stripped = text.strip()
    if stripped.startswith("["):
        try:
            items = json.loads(stripped)
        except json.JSONDecodeError:
            items = None  # a line such as "[1] ..." is a fact, not broken JSON
        if items is not None:
            if not isinstance(items, list) or not all(isinstance(item, str) for item in items):
                raise ValueError("a JSON fact list must be a list of strings")
            return clean_facts(items)[0]
    return clean_facts(stripped.splitlines())[0]
