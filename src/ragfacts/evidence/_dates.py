"""Dates as written in English and Chinese: 1898-03-05, 1898年3月5日, 一八九八年, March 5, 1898, the 1890s."""

from __future__ import annotations

import re
from collections.abc import Iterable, Iterator

from ragfacts.evidence._mention import Mention
from ragfacts.evidence._numerals import CN_NUMERAL_CHARS as _CN
from ragfacts.evidence._numerals import parse_chinese

_MONTHS_LIST = (
    "january jan,february feb,march mar,april apr,may,june jun,july jul,august aug,september sep sept,"
    "october oct,november nov,december dec"
)
_MONTHS = {name: i for i, names in enumerate(_MONTHS_LIST.split(","), start=1) for name in names.split()}
_CN_DIGIT = "〇零一二三四五六七八九"
# Every pattern starts with a character it consumes, never with a look-behind, so that the regular expression
# engine can skip ahead to where one may match (three times faster); the look-behind comes after that
# character: "\d(?<![\d.]\d)" is a digit not preceded by a digit or a dot.
_CN_MONTH = rf"\d(?<![\d{_CN}]\d)\d?|十(?<![\d{_CN}]十)[一二]?|[一二三四五六七八九](?<![\d{_CN}].)"
_CN_DAY = r"\d{1,2}|[二三]?十[一二三四五六七八九]?|[一二三四五六七八九]"
_MONTH_NAME = r"January|February|March|April|May|June|July|August|September|October|November|December"
_MONTH_SHORT = r"Jan|Feb|Mar|Apr|Jun|Jul|Aug|Sept|Sep|Oct|Nov|Dec"
_YEAR_AFTER_MONTH = r"(?:\s?,?\s+(?P<y>\d{4}))?"
# (pattern, is a decade, must start a word, what the text must contain): tried in order, each claiming its span.
_Pattern = tuple[str, bool, bool, str]
_PATTERNS: tuple[_Pattern, ...] = (
    (r"(?P<y>\d(?<![\d.]\d)\d{3})(?P<sep>[-/.])(?P<m>\d{1,2})(?P=sep)(?P<d>\d{1,2})(?!\d)", False, False, "digit"),
    (
        rf"(?P<y>\d(?<![\d{_CN}]\d)\d{{2,3}}|[{_CN_DIGIT}](?<![\d{_CN}].)[{_CN_DIGIT}]{{3}})\s?年(?!代)"
        rf"(?:\s?(?P<m>\d{{1,2}}|十[一二]?|[一二三四五六七八九])\s?月(?:\s?(?P<d>{_CN_DAY})\s?[日号])?)?",
        False,
        False,
        "年",
    ),
    (rf"(?P<m>{_CN_MONTH})\s?月份?(?:\s?(?P<d>{_CN_DAY})\s?[日号])?", False, False, "月"),
    (r"(?P<y>\d(?<!\d\d)(?:\d{3}|\d))\s?年代|(?P<cy>[一二三四五六七八九]十)年代", True, False, "年代"),
    (r"(?P<y>\d(?<!\d\d)\d\d0)['’]?s\b", True, False, "digit"),
)


def _month_patterns(months: str) -> tuple[_Pattern, ...]:
    m = rf"(?P<mon>{months})\.?"
    return (
        (rf"{m}\s+(?P<d>\d{{1,2}})(?:st|nd|rd|th)?{_YEAR_AFTER_MONTH}(?![\d])", False, True, "month"),
        (rf"(?P<d>\d(?<!\d\d)\d?)(?:st|nd|rd|th)?\s+(?:of\s+)?{m}{_YEAR_AFTER_MONTH}\b", False, False, "month"),
        (rf"{m},?\s+(?P<y>\d{{4}})(?!\d)", False, True, "month"),
        (
            rf"(?:in|since|until|by|from|during|early|late|mid|before|after|through|of|last|next)[\s-]+{m}\b",
            False,
            True,
            "month",
        ),
    )


def _compiled(patterns: Iterable[_Pattern]) -> tuple[tuple[re.Pattern[str], bool, bool, str], ...]:
    return tuple((re.compile(p), decade, word_start, needs) for p, decade, word_start, needs in patterns)


_MONTH_NAMES = rf"{_MONTH_NAME}|{_MONTH_SHORT}"
# A month is capitalised in an answer ("may" is a verb); a reference may be all lower case (news corpora are).
_CAPITALISED = _compiled((*_PATTERNS, *_month_patterns(_MONTH_NAMES)))
_ANY_CASE = _compiled((*_PATTERNS, *_month_patterns(_MONTH_NAMES.lower())))
_ANY_DIGIT = re.compile(r"\d")
_ANY_MONTH = re.compile(_MONTH_NAMES)
_ANY_MONTH_LOWER = re.compile(_MONTH_NAMES.lower())


def date_mentions(folded: str, lowered: str, text: str, strict: bool) -> Iterator[Mention]:
    """Yield the dates of a text, pattern by pattern (`folded` and `lowered` are it folded and lower-cased).

    Month names count capitalised when `strict`, in any case otherwise. The dates may overlap: the caller keeps
    the first that claims a span (1898-03-05 before its 1898).
    """
    months = _ANY_MONTH.search(folded) if strict else _ANY_MONTH_LOWER.search(lowered)
    present = {"digit": bool(_ANY_DIGIT.search(folded)), "month": bool(months)}
    for pattern, decade, word_start, needs in _CAPITALISED if strict else _ANY_CASE:
        if not present.get(needs, needs in folded):
            continue  # cheaper than a pass that cannot match
        searched = lowered if needs == "month" and not strict else folded
        for match in pattern.finditer(searched):
            if word_start and folded[match.start() - 1 : match.start()].isalpha():
                continue
            mention = _date(match, text, decade)
            if mention:
                yield mention


def _date(match: re.Match[str], text: str, decade: bool) -> Mention | None:
    groups = match.groupdict()
    start, end = match.span()
    if decade:
        year = _date_part(groups.get("cy") or groups.get("y"))
        return Mention("date", start, end, text[start:end], f"{year}s", date=(year, None, None), decade=True)
    year = _date_part(groups.get("y"))
    month = _MONTHS[groups["mon"].casefold()] if groups.get("mon") else _date_part(groups.get("m"))
    day = _date_part(groups.get("d"))
    if (month is not None and not 1 <= month <= 12) or (day is not None and not 1 <= day <= 31):
        return None
    if groups.get("mon") and year is None and day is None:
        start, end = match.span("mon")  # "in March": the month is the mention
    if year is not None:
        value = str(year) if month is None else f"{year:04d}-{month:02d}" + (f"-{day:02d}" if day else "")
    else:
        value = f"--{month:02d}" + (f"-{day:02d}" if day else "")
    components = tuple(float(part) for part in (year, month, day) if part is not None)
    return Mention("date", start, end, text[start:end], value, date=(year, month, day), components=components)


def _date_part(written: str | None) -> int | None:
    if not written:
        return None
    if written.isdigit():
        return int(written)
    parsed = parse_chinese(written)
    return int(parsed[0]) if parsed else None
