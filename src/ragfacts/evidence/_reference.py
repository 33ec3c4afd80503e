"""A reference, read once for every answer checked against it: its mentions and the words names are looked up in."""

from __future__ import annotations

import itertools
import re
from functools import cached_property, lru_cache

from ragfacts.evidence._acronyms import acronyms
from ragfacts.evidence._entities import (
    capitalised_mid_sentence,
    english_entities,
    latin_tokens,
    latin_words,
    quoted_names,
    stem,
    word_stems,
)
from ragfacts.evidence._mention import Mention
from ragfacts.evidence._numbers import numeric_mentions
from ragfacts.text import detect_lang, normalise

_CJK = re.compile(r"[\u3400-\u4dbf\u4e00-\u9fff\uf900-\ufaff]")


class Reference:
    """What a reference states, each part read when first needed and then kept."""

    def __init__(self, text: str) -> None:
        self.text = text

    @cached_property
    def lang(self) -> str:
        return detect_lang(self.text)

    @cached_property
    def numeric(self) -> tuple[Mention, ...]:
        return tuple(numeric_mentions(self.text, strict=False))

    @cached_property
    def components(self) -> frozenset[float]:
        """Every number the reference states, in any form (a date's year and day, a sum's figure ...)."""
        return frozenset(c for m in self.numeric for c in m.components)

    @cached_property
    def words(self) -> frozenset[str]:
        return latin_words(self.text)

    @cached_property
    def stems(self) -> frozenset[str]:
        return word_stems(self.words)

    @cached_property
    def stems_by_prefix(self) -> dict[str, tuple[str, ...]]:
        """The stems by their first four letters, to look demonyms up by."""
        groups: dict[str, list[str]] = {}
        for folded in self.stems:
            groups.setdefault(folded[:4], []).append(folded)
        return {prefix: tuple(group) for prefix, group in groups.items()}

    @cached_property
    def acronyms(self) -> frozenset[str]:
        """The letters of every abbreviation the reference writes (ACLs: ACL)."""
        return acronyms(self.text)

    @cached_property
    def stem_text(self) -> str:
        """The reference's words as stems, space-separated and space-framed: phrases are looked up in it."""
        return f" {' '.join(stem(token.word) for token in latin_tokens(self.text))} "

    @cached_property
    def compounds(self) -> frozenset[str]:
        """Two neighbouring words written as one, folded: "Auto Loader" as autoloader (a name may close it up)."""
        tokens = latin_tokens(self.text)
        return frozenset(
            stem(a.word + b.word) for a, b in itertools.pairwise(tokens) if self.text[a.end : b.start] in (" ", "-")
        )

    @cached_property
    def entities(self) -> tuple[Mention, ...]:
        named = capitalised_mid_sentence(self.text)
        english = english_entities(self.text, named, [], with_words=False)  # month names are no names anyway
        return (*english, *quoted_names(self.text, chinese=True))

    @cached_property
    def normalised(self) -> str:
        return normalise(self.text)

    @cached_property
    def has_latin(self) -> bool:
        return any(len(word) > 1 for word in self.words)

    @cached_property
    def has_cjk(self) -> bool:
        return _CJK.search(self.text) is not None


@lru_cache(maxsize=256)
def read_reference(reference: str) -> Reference:
    """Return the reader of a reference (cached: one reference serves many answers and both entry points)."""
    return Reference(reference)
