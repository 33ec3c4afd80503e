"""One model call of a precision stage: load the prompt, delimit the untrusted texts, ask for a schema."""

from __future__ import annotations

from pydantic import BaseModel

from ragfacts.methods.precision.schemas import in_language
from ragfacts.models import ChatModel, Completion, Message
from ragfacts.prompts import load_prompt
from ragfacts.text import delimit

_NO_QUESTION = {"en": "(no question given)", "zh": "（未提供问题）"}


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
    prompt = load_prompt(prompt_name, lang)
    values = {tag: delimit(tag, text) for tag, text in texts.items()}
    values["question"] = delimit("question", question) if question and question.strip() else _NO_QUESTION[lang]
    return await model.complete(
        [Message(role="user", content=prompt.render(**values))],
        in_language(schema, lang),
        stage=prompt_name,
        prompt_version=prompt.id,
        lang=lang,
    )
