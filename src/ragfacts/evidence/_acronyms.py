"""Abbreviations and what they stand for: DBFS for "Databricks File System", CTAS for "Create Table As Select",
and the pairs a text defines itself: "access control lists (ACLs)", "DBFS (Databricks File Store)"."""

from __future__ import annotations

import itertools
import re
from dataclasses import dataclass
from functools import lru_cache

from ragfacts.evidence._entities import latin_tokens

# Words a long form may leave out of its abbreviation (or not): "Department of Energy" (DOE), "Bank of America".
_JOINERS_LIST = "of and for the on in de to a an at by with & von van der du la le"
_JOINERS = frozenset(_JOINERS_LIST.split())
# An abbreviation: two to eight capitals (dotted or not), a plural "s" allowed: ACLs, U.S., HTTPS.
_ACRONYM = r"(?:[A-Z]\.){2,8}|[A-Z][A-Z&]{1,7}s?"
_ACRONYM_WORD = re.compile(rf"(?<![\w.])(?:{_ACRONYM})(?![\w])")
# "Long Name (ABBR)" and "ABBR (Long Name)" on one line.
_LONG_THEN_SHORT = re.compile(rf"\((?P<abbr>{_ACRONYM})\)")
_SHORT_THEN_LONG = re.compile(rf"(?<![\w.])(?P<abbr>{_ACRONYM})\s?\((?P<long>[^()\n]{{3,80}})\)")
_GAP = re.compile(r"[ \t]+|[ \t]*-[ \t]*")


def acronym_letters(word: str) -> str:
    """Return the letters of an abbreviation (ACLs: ACL, U.S.: US), or "" where `word` is none."""
    letters = word.replace(".", "")
    if letters.endswith("s") and len(letters) > 2 and letters[:-1].isupper():
        letters = letters[:-1]
    if 2 <= len(letters) <= 8 and letters.isupper() and letters.replace("&", "").isalpha() and len(set(letters)) > 1:
        return letters.replace("&", "")
    return ""


@lru_cache(maxsize=16384)
def stands_for(letters: str, words: tuple[str, ...]) -> bool:
    """Whether `letters` abbreviate all of `words`, two words at least.

    Each word gives its first letter; joining words ("of", "and") may give theirs or none. One word may give one
    more of its letters (DBFS: Databricks File System) where there is no joining word to leave out: "University in
    Kunming" is no UNK.
    """
    joined = sum(1 for word in words if word.casefold() in _JOINERS)
    if len(words) - joined < 2 or not letters or words[0].casefold() in _JOINERS:
        return False
    return _spell(letters.upper(), tuple(w.upper() for w in words), 0, 0, 0 if joined else 1)


def _spell(letters: str, words: tuple[str, ...], i: int, j: int, inner: int) -> bool:
    if j == len(words):
        return i == len(letters)
    word = words[j]
    if word.casefold() in _JOINERS and _spell(letters, words, i, j + 1, inner):
        return True
    if i == len(letters) or word[0] != letters[i]:
        return False
    if _spell(letters, words, i + 1, j + 1, inner):
        return True
    if inner and i + 1 < len(letters):
        return any(
            ch == letters[i + 1] and _spell(letters, words, i + 2, j + 1, inner - 1) for ch in set(word[1:])
        )  # the same letter twice in a word changes nothing: the rest of the word is not read
    return False


def acronyms(text: str) -> frozenset[str]:
    """Return the letters of every abbreviation written in `text`."""
    return frozenset(filter(None, (acronym_letters(m.group(0)) for m in _ACRONYM_WORD.finditer(text))))


@lru_cache(maxsize=4096)
def spelled_out(letters: str, text: str) -> bool:
    """Whether `text` has capitalised words that `letters` abbreviate (`stands_for`): DBFS in "the Databricks
    File System"; joining words may be lower-case."""
    tokens = latin_tokens(text)
    for start, token in enumerate(tokens):
        if token.word[0] != letters[0]:
            continue
        words: list[str] = []
        for k in range(start, min(len(tokens), start + 2 * len(letters))):
            if k > start and not _GAP.fullmatch(text[tokens[k - 1].end : tokens[k].start]):
                break
            word = tokens[k].word
            if not word[0].isupper() and word.casefold() not in _JOINERS:
                break
            words.append(word)
            if stands_for(letters, tuple(words)):
                return True
    return False


@dataclass(frozen=True, slots=True)
class Pair:
    """An abbreviation and its long form as a text defines them: "access control lists (ACLs)"."""

    letters: str
    short: tuple[int, int]  # the abbreviation's span
    long: tuple[int, int]  # the long form's span
    words: tuple[str, ...]  # the long form's words


def defined_pairs(text: str) -> list[Pair]:
    """Return the abbreviations `text` defines beside their long forms, either way round: "Databricks File System
    (DBFS)", "DBFS (Databricks File System)", "access control lists (ACLs)". The letters must abbreviate the long
    form (`stands_for`), so that "Paris (France)" or "SQL (a language)" are no pairs."""
    pairs: list[Pair] = []
    for match in _SHORT_THEN_LONG.finditer(text):
        letters = acronym_letters(match.group("abbr"))
        tokens = latin_tokens(match.group("long"))
        if letters and tokens:
            offset = match.start("long")
            start, end = tokens[0].start + offset, tokens[-1].end + offset
            if stands_for(letters, tuple(t.word for t in tokens)):
                pairs.append(Pair(letters, match.span("abbr"), (start, end), tuple(t.word for t in tokens)))
    for match in _LONG_THEN_SHORT.finditer(text):
        letters = acronym_letters(match.group("abbr"))
        line_start = text.rfind("\n", 0, match.start()) + 1
        before = latin_tokens(text[line_start : match.start()])
        if not letters or not before or text[line_start + before[-1].end : match.start()].strip():
            continue
        for k in range(len(before) - 2, max(-1, len(before) - 2 * len(letters) - 3), -1):
            gaps = (text[line_start + a.end : line_start + b.start] for a, b in itertools.pairwise(before[k:]))
            if not all(_GAP.fullmatch(gap) for gap in gaps):
                break
            words = tuple(t.word for t in before[k:])
            if stands_for(letters, words):
                long = (line_start + before[k].start, line_start + before[-1].end)
                pairs.append(Pair(letters, match.span("abbr"), long, words))
                break
    return pairs
