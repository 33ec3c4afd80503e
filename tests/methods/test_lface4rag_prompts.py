"""The precision prompts: versioned data files, the same placeholders in Chinese and English."""

from __future__ import annotations

import string

import pytest

from ragfacts.prompts import load_prompt

PROMPTS = [
    "decompose",
    "decompose_conventional",
    "fact_consistency",
    "fact_consistency_direct",
    "logic_consistency",
    "logic_consistency_direct",
    "holistic",
    "holistic_direct",
]


def placeholders(text: str) -> set[str]:
    return {m.group("named") or m.group("braced") for m in string.Template.pattern.finditer(text)} - {None}


@pytest.mark.parametrize("name", PROMPTS)
def test_each_prompt_exists_in_both_languages_with_the_same_placeholders(name: str):
    english, chinese = load_prompt(name, "en"), load_prompt(name, "zh")
    assert english.version == chinese.version
    assert placeholders(english.text) == placeholders(chinese.text)
    assert "question" in placeholders(english.text)
    assert {"reference", "segment", "answer"} & placeholders(english.text)


@pytest.mark.parametrize("name", PROMPTS)
def test_each_prompt_renders_with_only_the_texts_it_is_given(name: str):
    values = dict.fromkeys(placeholders(load_prompt(name, "en").text), "TEXT")
    for lang in ("en", "zh"):
        assert "$" not in load_prompt(name, lang).render(**values)


EXAMPLE_KINDS = {
    "en": ["logical connection", "pronoun substitution", "list and markdown"],
    "zh": ["逻辑联系", "代词替换", "列表与 Markdown"],
}


@pytest.mark.parametrize("lang", ["en", "zh"])
def test_the_logic_preserving_prompt_shows_the_three_kinds_of_examples(lang: str):
    text = load_prompt("decompose", lang).text
    assert all(kind in text for kind in EXAMPLE_KINDS[lang])
    assert text.count('{"segments": [') == 3


@pytest.mark.parametrize("lang", ["en", "zh"])
async def test_every_call_that_reads_the_reference_starts_with_the_same_bytes(lang, make_model, scripted_server):
    """The reference comes first, so the local KV cache and providers' prompt caches reuse it across stages."""
    from ragfacts.items import Item
    from ragfacts.methods.base import create_method
    from ragfacts.text import delimit

    reference = "The Nile flows north." if lang == "en" else "尼罗河向北流。"
    answer = "The Nile flows north. It is long." if lang == "en" else "尼罗河向北流。它很长。"
    item = Item(reference=reference, answer=answer, question="Q?")
    for spec in ("lface4rag", "holistic", "factscore", "felm", "ragas", "refchecker"):
        await create_method(spec).evaluate(item, make_model())
    readers = [r.prompt for r in scripted_server.requests if delimit("reference", reference) in r.prompt]
    prefix = readers[0][: readers[0].index("</question>")]
    assert len(readers) >= 8 and all(prompt.startswith(prefix) for prompt in readers)
