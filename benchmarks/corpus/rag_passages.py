"""Long references cut to the passages an answer draws on, and the sentence fingerprints that group references.

Both are pure functions of the text, shared by build_rag_sources.py and its tests.

Cutting rule (``cut_reference``): a reference of at most ``bound`` characters is kept whole. A longer one is a list
of passages (the source's documents or, for a one-block article, the whole text); each passage is split at sentence
ends and line breaks into pieces of at most PIECE_CHARS characters (a quarter of ``bound`` if that is less). Every
piece is scored by the number of distinct content words of the anchor text (the answer; for BUMP, the unedited
summary) it contains; pieces are taken by score (ties: earlier first) while the result still fits in ``bound``, and
written back in their original order: adjacent pieces of one passage as the exact original text between them,
anything else separated by a blank line.
"""

from __future__ import annotations

import itertools
import re

PIECE_CHARS = 1000  # a piece is at most this long: small enough to choose among, long enough to read
PASSAGE_SEPARATOR = "\n\n"
MIN_FINGERPRINT_CHARS = 50  # a normalised sentence at least this long identifies its document

_WORD = re.compile(r"[a-z0-9]+")
# A piece may end after a sentence end followed by white space, or at a line break.
_BREAK = re.compile(r"(?<=[.!?])[\"')\]]*\s+|\n\s*")
_FUNCTION_WORDS = (
    "a an and are as at be been but by can could did do does for from had has have he her his how i if in into is "
    "it its may more most much no not of on or our she so such than that the their them then there these they this "
    "those to too was we were what when where which who why will with would you your also about after all any each "
    "other some only over very"
)
_STOPWORDS = frozenset(_FUNCTION_WORDS.split())


def content_words(text: str) -> set[str]:
    """Lower-case words and numbers of ``text``, without common function words."""
    return {w for w in _WORD.findall(text.lower()) if w not in _STOPWORDS}


def _hard_split(start: int, end: int, text: str, limit: int) -> list[tuple[int, int]]:
    """Spans of at most ``limit`` characters, cut at the last space before the limit where there is one."""
    spans = []
    while end - start > limit:
        cut = text.rfind(" ", start + 1, start + limit)
        cut = cut if cut > start else start + limit
        spans.append((start, cut))
        start = cut
    spans.append((start, end))
    return spans


def pieces(passage: str, limit: int = PIECE_CHARS) -> list[tuple[int, int]]:
    """Spans (start, end) of ``passage`` that cover it in order: sentences packed up to ``limit`` characters."""
    bounds = [0, *(m.end() for m in _BREAK.finditer(passage) if 0 < m.end() < len(passage)), len(passage)]
    units: list[tuple[int, int]] = []
    for start, end in itertools.pairwise(bounds):
        if end > start:
            units.extend(_hard_split(start, end, passage, limit))
    packed: list[tuple[int, int]] = []
    for start, end in units:
        if packed and end - packed[-1][0] <= limit:
            packed[-1] = (packed[-1][0], end)
        else:
            packed.append((start, end))
    return packed


def join_passages(passages: list[str]) -> str:
    return PASSAGE_SEPARATOR.join(passages)


def _render(passages: list[str], chosen: list[tuple[int, int, int]]) -> str:
    """The text of the chosen (passage, start, end) pieces in original order; runs within a passage kept exact."""
    runs: list[tuple[int, int, int]] = []
    for p, start, end in sorted(chosen):
        if runs and runs[-1][0] == p and runs[-1][2] == start:
            runs[-1] = (p, runs[-1][1], end)
        else:
            runs.append((p, start, end))
    return PASSAGE_SEPARATOR.join(passages[p][start:end].strip() for p, start, end in runs)


def cut_reference(passages: list[str], anchor: str, bound: int) -> str:
    """The reference (passages joined by a blank line), cut to at most ``bound`` characters by the module's rule.

    ``bound`` <= 0 keeps every reference whole.
    """
    whole = join_passages(passages)
    if bound <= 0 or len(whole) <= bound:
        return whole
    wanted = content_words(anchor)
    limit = max(1, min(PIECE_CHARS, bound // 4))  # the best pieces always fit
    candidates = []
    for p, passage in enumerate(passages):
        for start, end in pieces(passage, limit):
            if passage[start:end].strip():
                score = len(wanted & content_words(passage[start:end]))
                candidates.append((-score, p, start, end))
    candidates.sort()
    chosen: list[tuple[int, int, int]] = []
    for _, p, start, end in candidates:
        trial = [*chosen, (p, start, end)]
        if len(_render(passages, trial)) <= bound:
            chosen = trial
    return _render(passages, chosen)


def normalise(sentence: str) -> str:
    """Lower case, letters and digits only: the same sentence tokenised or cased differently gives the same key."""
    return "".join(_WORD.findall(sentence.lower()))


def fingerprints(reference: str) -> set[str]:
    """Normalised sentences of ``reference`` long enough to identify the document they come from."""
    keys = set()
    for sentence in re.split(r"(?<=[.!?])\s+|\n+", reference):
        key = normalise(sentence)
        if len(key) >= MIN_FINGERPRINT_CHARS:
            keys.add(key)
    return keys
