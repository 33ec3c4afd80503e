"""One structured model call of a judge: load the prompt, delimit the untrusted texts, ask for a schema.

`estimate` gives what such a call should cost without making it, for `--dry-run`: the prompt is rendered
exactly as `ask` would send it and its tokens (with the schema's) are estimated from its characters.
"""

from __future__ import annotations

import json
from functools import cache
from typing import Any

from pydantic import BaseModel

from ragfacts.methods.bilingual import in_language
from ragfacts.models import ChatModel, Completion, Message, ReaskWording
from ragfacts.models.structured import ReplySchema, Shaped, json_schema_of, render_schema
from ragfacts.prompts import LANGS, PromptTemplate, load_prompt
from ragfacts.text import approx_tokens, delimit
from ragfacts.usage import Usage

_NO_QUESTION = {"en": "(no question given)", "zh": "（未提供问题）"}


def render(prompt_name: str, lang: str, question: str | None, texts: dict[str, str]) -> tuple[PromptTemplate, str]:
    """The prompt template and its text with every untrusted text delimited under its own tag."""
    prompt = load_prompt(prompt_name, lang)
    values = {tag: delimit(tag, text) for tag, text in texts.items()}
    values["question"] = delimit("question", question) if question and question.strip() else _NO_QUESTION[lang]
    return prompt, prompt.render(**values)


@cache
def reask_wording(lang: str) -> ReaskWording:
    """What a re-ask says after a prompt in `lang` (prompts/<lang>/reask.md, reask_truncated.md); English for a
    language without prompt files. The methods choose it, so the model layer knows no prompt language."""
    lang = lang if lang in LANGS else "en"
    again = load_prompt("reask", lang)
    truncated = load_prompt("reask_truncated", lang).render().rstrip("\n")
    return ReaskWording(again=lambda errors: again.render(errors=errors).rstrip("\n"), truncated=truncated)


async def ask(
    model: ChatModel,
    prompt_name: str,
    schema: type[BaseModel],
    lang: str,
    *,
    question: str | None,
    **texts: str,
) -> Completion:
    """Return the completion of prompt `prompt_name` with each text delimited under its own tag.

    The stage recorded in the ledger is the prompt's name, so ablations show up as their own rows.
    """
    return await ask_with(model, prompt_name, schema, lang, question=question, texts=texts)


async def ask_with(
    model: ChatModel,
    prompt_name: str,
    schema: type[BaseModel],
    lang: str,
    *,
    question: str | None,
    texts: dict[str, str],
    params: dict[str, Any] | None = None,
) -> Completion:
    """`ask`, with the request's own parameters (`params`, e.g. a smaller max_tokens for an explanation)."""
    prompt, text = render(prompt_name, lang, question, texts)
    return await model.complete(
        [Message(role="user", content=text)],
        in_language(schema, lang),
        stage=prompt_name,
        prompt_version=prompt.id,
        lang=lang,
        reask=reask_wording(lang),
        **(params or {}),
    )


def estimate(
    model: ChatModel,
    prompt_name: str,
    schema: ReplySchema | None,
    lang: str,
    completion_tokens: int,
    *,
    question: str | None,
    **texts: str,
) -> Usage:
    """What one `ask` (or plain-text call when `schema` is None) should cost: 1 call, its prompt and reply tokens."""
    _, text = render(prompt_name, lang, question, texts)
    schema_tokens = 0
    if schema is not None:
        schema_json = json_schema_of(schema if isinstance(schema, Shaped) else in_language(schema, lang))
        shown = render_schema(schema_json, lang) if model.shows_schema_in_prompt() else json.dumps(schema_json)
        schema_tokens = approx_tokens(shown)
    return Usage(calls=1, prompt_tokens=approx_tokens(text) + schema_tokens, completion_tokens=completion_tokens)
