"""Edits made by code, not by the model: the model names a span and its replacement, code applies it.

So the flawed answer differs from the faithful one exactly where the recorded span says, and an edit whose
span is not in the answer is refused instead of trusted.
"""

from __future__ import annotations

import re
import unicodedata

from pydantic import BaseModel

from ragfacts.text import normalise


class Span(BaseModel):
    """What was edited: the answer's text at `start`, and what replaced it."""

    original: str
    replacement: str
    start: int


class EditError(ValueError):
    """Why an edit cannot be applied; the message is recorded with the dropped candidate."""


def apply_edit(answer: str, original: str, replacement: str) -> tuple[str, Span]:
    """Return `answer` with its first occurrence of `original` replaced, and the span; raises EditError.

    `original` is found verbatim, else leniently (quotes, full-width punctuation, whitespace), else also ignoring
    case; the span records the answer's own text.
    """
    original, replacement = original.strip(), replacement.strip()
    if not original:
        raise EditError("the model named no text to change")
    found = _locate(answer, original)
    if found is None:
        raise EditError(f"the text to change is not in the answer: {original!r}")
    start, end = found
    edited = answer[:start] + replacement + answer[end:]
    if normalise(edited) == normalise(answer):
        raise EditError("the edit changes nothing but spacing or punctuation")
    return edited, Span(original=answer[start:end], replacement=replacement, start=start)


def rewording_differs(answer: str, rewording: str) -> bool:
    """Whether a rewording differs from the answer in more than spacing, case and punctuation."""
    return bool(normalise(rewording)) and normalise(rewording) != normalise(answer)


def _locate(answer: str, original: str) -> tuple[int, int] | None:
    start = answer.find(original)
    if start >= 0:
        return start, start + len(original)
    # Small models copy "x" as 'x', ， as , and collapse spaces: any quote matches any quote, a punctuation mark
    # its full-width form, any whitespace any whitespace.
    pattern = r"\s+".join("".join(map(_lenient, word)) for word in original.split())
    for flags in (0, re.IGNORECASE):
        match = re.search(pattern, answer, flags)
        if match:
            return match.start(), match.end()
    return None


_QUOTES = "\"'“”‘’「」『』„‚«»`´"


def _lenient(char: str) -> str:
    """A pattern matching `char` or a variant a model may copy it as."""
    if char in _QUOTES:
        return f"[{re.escape(_QUOTES)}]"
    folded = unicodedata.normalize("NFKC", char)
    if len(folded) == 1 and 0x21 <= ord(folded) <= 0x7E and not folded.isalnum():
        return f"[{re.escape(folded + chr(ord(folded) + 0xFEE0))}]"  # ASCII punctuation and its full-width form
    return re.escape(char)
