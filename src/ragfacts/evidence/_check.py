"""Which numbers, dates, amounts and names of an answer its reference does not state."""

from __future__ import annotations

import importlib.util
from dataclasses import dataclass
from functools import cache
from typing import Literal

from ragfacts.evidence._acronyms import Pair, acronym_letters, defined_pairs, spelled_out, stands_for
from ragfacts.evidence._candidates import reference_candidates
from ragfacts.evidence._entities import (
    abbreviates,
    capitalised_mid_sentence,
    english_entities,
    latin_entities,
    latin_tokens,
    quoted_names,
    segmented_names,
    spells_out,
    stem,
)
from ragfacts.evidence._mention import Mention
from ragfacts.evidence._numbers import numeric_mentions
from ragfacts.evidence._numerals import same_amount
from ragfacts.evidence._reference import Reference, read_reference
from ragfacts.text import detect_lang

# What the reference gives none of, and how the answer's mention is said not to be there.
_ABSENT = {
    "en": {
        "number": "the reference gives no number",
        "date": "the reference gives no date",
        "percent": "the reference gives no percentage",
        "quantity": "the reference gives no quantity",
        "money": "the reference gives no amount of money",
        "entity": "the reference does not mention it",
    },
    "zh": {
        "number": "参考资料没有给出数字",
        "date": "参考资料没有给出日期",
        "percent": "参考资料没有给出百分比",
        "quantity": "参考资料没有给出数量",
        "money": "参考资料没有给出金额",
        "entity": "参考资料没有提到它",
    },
}


@dataclass(frozen=True)
class Mismatch:
    """A number, date, percentage, quantity, amount of money or name of the answer that the reference lacks.

    Attributes:
        kind: "number", "date", "percent", "quantity", "money" or "entity".
        text: as written in the answer, `answer[start:end]`.
        start: where it starts in the answer (a character offset).
        end: where it ends in the answer.
        value: its normalised form: 1898, 1898-03-05, 20%, 5000 m, 5000000 USD, paris.
        reference_candidates: the reference's values of the same kind, as written there, closest first (at most 3).
    """

    kind: str
    text: str
    start: int
    end: int
    value: str
    reference_candidates: tuple[str, ...] = ()

    def explain(self, lang: str = "en") -> str:
        """Return one line for a reader: "the answer says 1949; the reference says 1898" (or in Chinese)."""
        if lang.startswith("zh"):
            said = f"参考资料说 {'、'.join(self.reference_candidates)}" if self.reference_candidates else ""
            return f"回答说 {self.text}；{said or _ABSENT['zh'][self.kind]}"
        said = f"the reference says {' or '.join(self.reference_candidates)}" if self.reference_candidates else ""
        return f"the answer says {self.text}; {said or _ABSENT['en'][self.kind]}"


ChineseNames = bool | Literal["auto"]  # "auto": where jieba is installed


def answer_mentions(answer: str, lang: str, chinese_names: ChineseNames = False) -> list[Mention]:
    """Return every checkable mention of the answer (numeric ones first, then names), read strictly."""
    numeric = numeric_mentions(answer, strict=True)
    if lang == "zh":
        names = latin_entities(answer, latin_tokens(answer), numeric)
    else:
        names = english_entities(answer, capitalised_mid_sentence(answer), numeric)
    names += (q for q in quoted_names(answer, chinese=lang == "zh") if not any(_overlap(q, n) for n in names))
    if chinese_names and lang == "zh" and (chinese_names is True or _jieba_installed()):
        names += segmented_names(answer, [*numeric, *names])
    return numeric + sorted(names, key=lambda mention: mention.start)


def find_unsupported(
    answer: str, reference: str, lang: str | None = None, *, chinese_names: ChineseNames = False
) -> list[Mismatch]:
    """Return the answer's numbers, dates, percentages, quantities, money and names that the reference lacks.

    Args:
        answer: the text checked.
        reference: the text it should be faithful to.
        lang: "en" or "zh" (or "zh-CN" ...): how names are read; detected from the answer when None.
        chinese_names: also check the person and place names of a Chinese answer that jieba finds (it must be
            installed; it loads in about half a second, then reads some 10 µs a character); "auto": where jieba
            is installed.

    Returns:
        One Mismatch per unsupported mention, in answer order.
    """
    return [mismatch for _, mismatch in check_mentions(answer, reference, lang, chinese_names) if mismatch]


def check_mentions(
    answer: str, reference: str, lang: str | None = None, chinese_names: ChineseNames = False
) -> list[tuple[Mention, Mismatch | None]]:
    """Return every checkable mention of the answer with its Mismatch, or None where the reference states it."""
    lang = "zh" if (lang or detect_lang(answer)).startswith("zh") else "en"
    ref = read_reference(reference)
    mentions = answer_mentions(answer, lang, chinese_names)
    stated = frozenset(mention.value for mention in mentions)
    pairs = defined_pairs(answer) if any(m.kind == "entity" for m in mentions) else []
    return [(mention, _mismatch(mention, answer, ref, lang, stated, pairs)) for mention in mentions]


def _mismatch(
    mention: Mention, answer: str, ref: Reference, lang: str, stated: frozenset[str], pairs: list[Pair]
) -> Mismatch | None:
    if supported(mention, ref) or (mention.kind == "entity" and _pair_supported(mention, pairs, ref)):
        return None
    if mention.kind == "entity" and not _checkable(mention, ref, lang):
        return None
    candidates = reference_candidates(mention, answer, ref, stated)
    if mention.weak and not candidates:
        return None  # "three reasons", "first opened": reported only against a differing number said alike
    return Mismatch(mention.kind, mention.text, mention.start, mention.end, mention.value, candidates)


def _checkable(name: Mention, ref: Reference, lang: str) -> bool:
    """Whether the reference is written so that it would spell the name as the answer does.

    A name in a script the reference lacks may be there translated (Peking University, 北京大学); so may an
    English answer's names against a Chinese reference that has a few Latin words.
    """
    if name.family == "cjk":
        return ref.has_cjk
    return ref.has_latin and (ref.lang == "en" or lang == "zh")


def supported(mention: Mention, ref: Reference) -> bool:
    """Whether the reference states the mention (the rules are in the package docstring)."""
    if mention.kind == "entity":
        return _entity_supported(mention, ref)
    if mention.family == "time":
        return any(r.family == "time" and r.value == mention.value for r in ref.numeric)
    if any(_same(mention, r) for r in ref.numeric if r.kind == mention.kind):
        return True
    if mention.kind == "date" and _date_parts_stated(mention, ref):
        return True
    bare = (mention.kind == "number" and mention.family != "ordinal") or (
        mention.kind == "date" and mention.value.isdigit()
    )
    if not bare:
        return False
    amount = mention.amount if mention.amount is not None else mention.components[0]
    precision = mention.precision or 1.0
    if amount in ref.components or any(same_amount(amount, precision, c, mention.hedged) for c in ref.components):
        return True
    return mention.kind == "number" and _sum_or_difference(amount, ref.components)


def _sum_or_difference(amount: float, components: frozenset[float]) -> bool:
    """Whether a whole number of at least 10 is the sum or the difference of two the reference states: "30 more"
    from 120 and 150, "25 years" from 1990 and 2015. Smaller numbers are too often such a sum by chance."""
    if amount < 10 or amount != int(amount) or len(components) > 400:
        return False
    wholes = {c for c in components if c == int(c) and c > 0}
    return any(amount - c in wholes or amount + c in wholes for c in wholes if c != amount)


def _date_parts_stated(mention: Mention, ref: Reference) -> bool:
    """Whether the reference states a full date's year and its day apart: "born December 6" ... "in 1975"."""
    year, month, day = mention.date or (None, None, None)
    if mention.decade or year is None or month is None:
        return False
    dates = [r.date for r in ref.numeric if r.kind == "date" and r.date and not r.decade]
    year_stated = any(date[0] == year for date in dates) or float(year) in ref.components
    return year_stated and any(date[1:] == (month, day) or (day is None and date[1] == month) for date in dates)


def _same(mention: Mention, ref: Mention) -> bool:
    if mention.kind == "date":
        return _date_within(mention, ref)
    if mention.kind == "money" and not mention.currencies & ref.currencies:
        return False
    if mention.kind == "quantity" and mention.family != ref.family:
        return False
    if mention.family == "ordinal" or ref.family == "ordinal":
        return mention.family == ref.family and mention.amount == ref.amount
    if mention.amount is None or ref.amount is None:
        return False
    return same_amount(mention.amount, mention.precision, ref.amount, mention.hedged)


def _date_within(mention: Mention, ref: Mention) -> bool:
    """Whether the reference's date has every part the answer's date gives (1898 is within 1898-03-05)."""
    year, month, day = mention.date or (None, None, None)
    ref_year = (ref.date or (None, None, None))[0]
    if mention.decade:
        if year is None or ref_year is None:
            return False
        if year < 100:  # 90年代: the century is not said
            return ref_year % 100 // 10 * 10 == year
        if ref.decade and ref_year < 100:
            return ref_year == year % 100
        return ref_year // 10 * 10 == year
    if ref.decade:
        return False
    ref_date = ref.date or (None, None, None)
    return all(part is None or part == ref_part for part, ref_part in zip((year, month, day), ref_date, strict=True))


def _entity_supported(mention: Mention, ref: Reference) -> bool:
    if mention.family == "cjk":
        return mention.value in ref.normalised
    if all(_word_found(word, ref) for word in mention.words):
        return True
    if 1 < len(mention.words) < 4 and stem("".join(mention.words)) in ref.stems:
        return True  # Private Link for PrivateLink
    initials = "".join(w[0] for w in mention.value.split())
    if len(initials) > 1 and abbreviates(initials, ref.text):
        return True  # the United States for the U.S.
    # the reference's DBFS for "Databricks File System", CTAS for "Create Table As Select"
    words = tuple(mention.text.split())
    first = initials[:1].upper()
    return len(words) > 1 and any(stands_for(letters, words) for letters in ref.acronyms if letters[0] == first)


def _pair_supported(mention: Mention, pairs: list[Pair], ref: Reference) -> bool:
    """Whether the answer defines the name beside another form that the reference states: "DBFS (Databricks File
    Store)" where the reference says DBFS, "polycystic ovary syndrome (PCOS)" where it says the long form."""
    for pair in pairs:
        if pair.long[0] <= mention.start and mention.end <= pair.long[1]:
            if pair.letters in ref.acronyms or spelled_out(pair.letters, ref.text):
                return True
        elif pair.short[0] <= mention.start and mention.end <= pair.short[1]:
            phrase = " ".join(stem(part) for word in pair.words for part in word.split("-") if part)
            if f" {phrase} " in ref.stem_text:
                return True
    return False


# Abbreviations that the reference may write otherwise than by their initials.
_ALIASES = {
    "uk": ("britain", "british", "united kingdom", "england"),
    "us": ("america", "american", "united states"),
    "usa": ("america", "american", "united states"),
    "eu": ("europe", "european"),
    "un": ("united nations",),
    "tv": ("television",),
}


def _word_found(word: str, ref: Reference) -> bool:
    """Whether the reference has a word of a name: as it is, as a demonym (Turkish, Turkey) or spelled out (NASA)."""
    folded = stem(word)
    if folded in ref.stems or _demonym_of(folded, ref.stems_by_prefix.get(folded[:4], ())):
        return True
    if len(folded) > 5 and folded in ref.compounds:
        return True  # Autoloader for Auto Loader
    letters = acronym_letters(word)
    if not letters:
        return False
    if letters in ref.acronyms:
        return True  # ACLs for ACL
    aliases = _ALIASES.get(letters.casefold(), ())
    if any(all(stem(w) in ref.stems for w in a.split()) for a in aliases):
        return True
    return spells_out(letters, ref.text) or spelled_out(letters, ref.text)  # NASA; DBFS: Databricks File System


# What tells a country from its people or language: Turk-ish / Turk-ey, Belgi-an / Belgi-um, Chin-ese / Chin-a,
# and a direction from its region: West / West-ern.
_DEMONYM_ENDINGS_LIST = "- a e i n o y an ia ic ey um ern ish ian ese ean ien ium"
_DEMONYM_ENDINGS = frozenset(_DEMONYM_ENDINGS_LIST.split())


def _demonym_of(word: str, stems: tuple[str, ...]) -> bool:
    """Whether the reference has the word with another country/demonym ending (Turkish for Turkey)."""
    if len(word) < 4:
        return False
    for cut in range(4, len(word) + 1):
        root, ending = word[:cut], word[cut:] or "-"
        if ending in _DEMONYM_ENDINGS and any(
            other.startswith(root) and (other[cut:] or "-") in _DEMONYM_ENDINGS for other in stems
        ):
            return True
    return False


def _overlap(a: Mention, b: Mention) -> bool:
    return a.start < b.end and b.start < a.end


@cache
def _jieba_installed() -> bool:
    return importlib.util.find_spec("jieba") is not None
