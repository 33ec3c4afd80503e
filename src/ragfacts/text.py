"""Language-aware text helpers: language detection, sentence splitting, quote normalisation."""

from __future__ import annotations

import re
import unicodedata
from functools import lru_cache

_CJK = re.compile(r"[\u3400-\u4dbf\u4e00-\u9fff\uf900-\ufaff]")
_LATIN = re.compile(r"[A-Za-z]")
_SENTENCE_END = re.compile(
    r"(?<=[。！？；])(?![”’」』）)\]])"  # Chinese end, unless a closing quote/bracket follows
    r"|(?<=[。！？][”’」』])"  # ... in which case after that quote
    r"|(?<=[.!?;])(?=\s)"  # English end followed by a space (keeps 3.5 and e.g.)
    r"|(?<=[.!?][”’\"'])(?=\s)"
    r"|\n+"
)


def detect_lang(text: str) -> str:
    """Return "zh" when Chinese characters dominate the letters of `text`, else "en"."""
    cjk = len(_CJK.findall(text))
    latin_words = len(re.findall(r"[A-Za-z]+", text))
    return "zh" if cjk > 0 and cjk >= latin_words else "en"


def approx_tokens(text: str) -> int:
    """A tokenizer-free estimate of a text's tokens: one per CJK character, one per 4 other characters.

    Close enough (±25% on our prompts) for budgeting runs before they start; real counts come from the
    model's replies.
    """
    cjk = len(_CJK.findall(text))
    return cjk + -(-(len(text) - cjk) // 4)


def split_sentences(text: str) -> list[str]:
    """Split text into sentences; knows 。！？； as well as . ! ? ; and line breaks."""
    parts = _SENTENCE_END.split(text)
    return [p.strip() for p in parts if p and p.strip()]


def normalise(text: str) -> str:
    """Fold width and case, drop whitespace and punctuation: for matching quotes leniently."""
    folded = unicodedata.normalize("NFKC", text).casefold()
    return "".join(ch for ch in folded if not (ch.isspace() or unicodedata.category(ch).startswith("P")))


def quote_found(quote: str, source: str) -> str | None:
    """Return "exact" or "normalised" if `quote` occurs in `source`, else None."""
    quote = quote.strip()
    if not quote:
        return None
    if quote in source:
        return "exact"
    needle = normalise(quote)
    return "normalised" if needle and needle in _normalised(source) else None


@lru_cache(maxsize=256)
def _normalised(source: str) -> str:
    # A reference is searched for every quote of every segment: normalise it once.
    return normalise(source)


def delimit(tag: str, text: str) -> str:
    """Wrap untrusted text in <tag>...</tag>, neutralising any copy of the tags inside it."""
    cleaned = re.sub(
        rf"</?\s*{re.escape(tag)}\s*>",
        lambda m: m.group(0).replace("<", "‹").replace(">", "›"),
        text,
        flags=re.IGNORECASE,
    )
    return f"<{tag}>\n{cleaned}\n</{tag}>"
