"""Numeric mentions of a text (numbers, dates, percentages, quantities, money) with spans and normalised values."""

from __future__ import annotations

import re
from typing import Any

from ragfacts.evidence._dates import date_mentions
from ragfacts.evidence._entities import CODE
from ragfacts.evidence._mention import Mention
from ragfacts.evidence._numerals import (
    CN_DIGITS,
    CN_NUMERAL_CHARS,
    EN_NUMBER_WORD,
    fold,
    format_number,
    parse_arabic,
    parse_chinese,
    parse_english,
    scale_value,
)
from ragfacts.evidence._units import (
    AFTER,
    BASE_UNITS,
    CN_MEASURE_WORD,
    CN_NUMBER_FOLLOWERS,
    CURRENCIES,
    UNIT_OFFSETS,
    UNITS,
    currency_before,
    currency_label,
    hedged_before,
)

_LETTER_IN_BRACKETS = re.compile(r"\([a-z]\)")
# A list item run into a line: "causes: 1. Low quality 2. Drugs 3. Radiation". Only where the number before or after
# it is also one, so that "It has 4. Then" keeps its 4.
_INLINE_ITEM = re.compile(r"(?<![\w.,])(\d{1,2})\.(?=\s+[A-Z\"“*])")
# Not amounts: a phone number, "24/7".
_CODES = re.compile(r"\(\d{3}\)\s?\d{3}[-.\s]\d{4}|\b\d{3}[-.]\d{3}[-.]\d{4}\b|\b24/7\b")
_TIME = re.compile(r"(?P<h>\d(?<![\d:]\d)\d?):(?P<m>[0-5]\d)(?![\d:])")
# Numbers that enumerate or cite rather than state: "1. Paris", "(2)", "[3]", "【4】".
_NOT_FACTS = re.compile(
    r"(?m)^[ \t>*•-]*\(?\d{1,2}[.)、](?=[ \t]|[^\d\s.,])|[(（]\d{1,2}[)）]|\[\d{1,3}(?:[,–-]\s?\d{1,3})*\]|【\d{1,3}】"
)
# A digit not preceded by a letter, digit or dot (see _dates on why the look-behind follows the digit), then
# thousands groups (1,898 / 1 898) or more digits, then decimals; or a run of Chinese numerals.
_ATOM = re.compile(
    r"(?P<arabic>\d(?<![A-Za-z0-9_.]\d)(?:\d{0,2}(?:[, ]\d{3})+(?!\d)|\d*)(?:\.\d+)?)"
    rf"|(?P<cn>[{CN_NUMERAL_CHARS}]+)"
)
# Matched in the lower-cased text: a case-insensitive pattern cannot skip ahead.
_WORD_ATOM = re.compile(rf"(?P<word>{EN_NUMBER_WORD})(?![a-z])")
_ASCII_LOWER = str.maketrans({chr(i): chr(i + 32) for i in range(65, 91)})
_ORDINAL_SUFFIX = re.compile(r"(?:st|nd|rd|th)\b")
_YEAR_BEFORE = re.compile(
    r"(?:\b(?:in|since|from|until|till|by|before|after|during|circa|c\.|ca\.|around|year|early|late|mid|between"
    r"|through)\s+(?:the\s+)?(?:year\s+)?|\d{4}\s?(?:-|–|—|to|and)\s?)$",
    re.IGNORECASE,
)
_YEAR_AFTER = re.compile(r"\s?(?:-|–|—|to)\s?\d{4}(?!\d)")


def numeric_mentions(text: str, strict: bool) -> list[Mention]:
    """Return the numbers, dates, percentages, quantities and amounts of money of `text`, in order.

    `strict` is for the text being checked (an answer): ambiguous forms are left out there ("one", a Chinese
    numeral not followed by a measure word, a capitalised number word inside a name). The text that supports
    it (the reference) is read leniently: a form too many there only makes a flag less likely.
    """
    folded = fold(text)
    taken = bytearray(len(text))
    found: list[Mention] = []

    def claim(start: int, end: int) -> bool:
        if any(taken[start:end]):
            return False
        taken[start:end] = b"\x01" * (end - start)
        return True

    if strict:  # a reference's list numbers may still be what an answer counts ("the 4 products")
        for match in _NOT_FACTS.finditer(folded):
            claim(*match.span())
        for match in (*CODE.finditer(folded), *_CODES.finditer(folded)):
            claim(*match.span())
        items = [(int(match[1]), match.span()) for match in _INLINE_ITEM.finditer(folded)]
        numbers = {number for number, _ in items}
        for number, span in items:
            if number - 1 in numbers or number + 1 in numbers:
                claim(*span)
    # str.lower keeps the length of every character but İ.
    lowered = folded.lower() if "\u0130" not in folded else folded.translate(_ASCII_LOWER)
    found += (date for date in date_mentions(folded, lowered, text, strict) if claim(date.start, date.end))
    for match in _TIME.finditer(folded):
        if int(match["h"]) < 24 and claim(*match.span()):
            value = f"{int(match['h']):02d}:{match['m']}"
            found.append(Mention("number", *match.span(), match[0], value, family="time"))
    words = (m for m in _WORD_ATOM.finditer(lowered) if not lowered[m.start() - 1 : m.start()].isalpha())
    for match in sorted([*_ATOM.finditer(folded), *words], key=lambda m: m.start()):
        start, end = match.span()
        if match.lastgroup == "cn" and _not_a_number(folded, start, end):
            continue
        if not any(taken[start:end]):
            mention = _amount(match, folded, lowered, text, strict)
            if mention and claim(mention.start, mention.end):
                found.append(mention)
    return sorted(found, key=lambda mention: mention.start)


def _not_a_number(folded: str, start: int, end: int) -> bool:
    """Whether a run of Chinese numerals is none: the 百 of 百分之二十 (read with the number that follows), or a
    lone numeral without a measure word after it (统一, 一起, 之一)."""
    if folded.startswith("百分之", start):
        return True
    lone = end - start == 1 and folded[start - 1 : start] != "第"
    return lone and folded[end : end + 1] not in CN_NUMBER_FOLLOWERS


def _amount(match: re.Match[str], folded: str, lowered: str, text: str, strict: bool) -> Mention | None:
    """The mention a written number heads, with its scale and its unit, currency or percent sign."""
    read = _written_number(match, folded, text, strict)
    if read is None or isinstance(read, Mention):
        return read
    value, precision, end, loose = read
    start, form, written = match.start(), match.lastgroup or "", folded[match.start() : end]
    after = AFTER.match(lowered, end)
    assert after is not None  # every part of AFTER is optional: it matches, if only the empty string
    scale = scale_value(after) if after.group("en") or after.group("cn") else 1.0
    total, precision = value * scale, precision * scale
    end = max(end, *(after.end(group) for group in ("more", "cn", "en")))
    tail = max(end, after.end("hedge"))  # the end of the mention but for what it is counted in
    fields: dict[str, Any] = {
        "hedged": hedged_before(lowered, start) or bool(after.group("more") or after.group("hedge")),
        "components": (value, total),
    }
    if after.group("percent") or folded[max(0, start - 3) : start] == "百分之":
        start = start if after.group("percent") else start - 3
        tail = max(tail, after.end("percent"))
        return _mention("percent", text, start, tail, f"{format_number(total)}%", total, precision, **fields)
    sign = currency_before(folded, start)
    if sign >= 0 or after.group("currency"):
        names = [
            name.strip().casefold() for name in (folded[sign:start] if sign >= 0 else "", after["currency"]) if name
        ]
        currencies = frozenset.intersection(*(CURRENCIES[name] for name in names))
        value_text = f"{format_number(total)} {currency_label(currencies)}"
        start, tail = (sign if sign >= 0 else start), max(tail, after.end("currency"))
        return _mention("money", text, start, tail, value_text, total, precision, currencies=currencies, **fields)
    if after.group("unit"):
        unit = after.group("unit").strip(" -").casefold()
        dimension, factor = UNITS[unit]
        base = (total + UNIT_OFFSETS.get(unit, 0.0)) * factor
        value_text = f"{format_number(round(base, 9))} {BASE_UNITS[dimension]}"
        fields["components"] = (value, total, base)
        tail = max(tail, after.end("unit"))
        return _mention("quantity", text, start, tail, value_text, base, precision * factor, family=dimension, **fields)
    loose = loose or not _plausible_number(form, written, folded, start, end, value)
    if strict and loose:
        return None
    if form == "arabic" and folded[end : end + 1].isascii() and folded[end : end + 1].isalpha():
        return None  # a code, not an amount: 3D, 4K, 10am
    if form == "arabic" and _LETTER_IN_BRACKETS.match(folded, end):
        return None  # a code: 401(k), 501(c)(3)
    if _is_year(form, written, value, scale, folded, start, end):
        return Mention(
            "date", start, end, text[start:end], str(int(value)), date=(int(value), None, None), components=(value,)
        )
    weak = form != "arabic" and scale == 1 and value < 10
    return _mention(
        "number",
        text,
        start,
        end,
        format_number(total),
        total,
        precision,
        family="cardinal",
        weak=weak,
        loose=loose,
        **fields,
    )


def _written_number(
    match: re.Match[str], folded: str, text: str, strict: bool
) -> tuple[float, float, int, bool] | Mention | None:
    """Read the number itself: (value, precision, end, loose), or the ordinal it is, or None if it is none."""
    start, end = match.span()
    written, form = folded[start:end], match.lastgroup
    after_di = folded[start - 1 : start] == "第"
    if form == "arabic":
        value, precision = parse_arabic(written)
        suffix = _ORDINAL_SUFFIX.match(folded, end)
        if suffix or after_di:
            return _ordinal(text, start - after_di, suffix.end() if suffix else end, value)
        return value, precision, end, False
    if form == "cn":
        parsed = parse_chinese(written)
        if parsed is None or (len(written) > 1 and all(ch in CN_DIGITS for ch in written)):
            return None  # 一三 is no number; 一九四九 is one only as a year, which the dates took
        if after_di:
            return _ordinal(text, start - 1, end, parsed[0])
        loose = written[0] in "百千万亿佰仟"  # 千万 (by all means), 万一 (in case), 百姓 (common people)
        return None if strict and loose else (*parsed, end, loose)
    number, ordinal, used = parse_english(written.casefold())
    if ordinal:
        return _ordinal(text, start, start + used, float(number))
    return float(number), 1.0, start + used, False


def _mention(
    kind: str, text: str, start: int, end: int, value: str, amount: float, precision: float, **fields: Any
) -> Mention:
    while end > start and text[end - 1].isspace():
        end -= 1  # a scale word's pattern takes the space after it
    return Mention(kind, start, end, text[start:end], value, amount, precision, **fields)


def _ordinal(text: str, start: int, end: int, value: float) -> Mention:
    # Ordinals are weak: "first" and "第一" are as often manner of speech ("first opened") as facts.
    value_text = f"#{format_number(value)}"
    return _mention(
        "number", text, start, end, value_text, value, 1.0, family="ordinal", components=(value,), weak=True
    )


def _plausible_number(form: str, written: str, folded: str, start: int, end: int, value: float) -> bool:
    """Whether a number word of an answer is a number (not "one of", "三国", "十全十美", "Three Gorges")."""
    if form == "cn":
        if written == "一":
            return False
        spelled_out = len(written) > 1 and value >= 100  # 一百, 三千, 两万: no idiom reads so
        return spelled_out or bool(CN_MEASURE_WORD.match(folded, end))
    if form == "word":
        if value == 1:
            return False
        before = folded[max(0, start - 8) : start].rstrip(" \"'“‘(*")
        return written.islower() or not before or before[-1] in ".!?\n:;"
    return True


def _is_year(form: str, written: str, value: float, scale: float, folded: str, start: int, end: int) -> bool:
    """Whether an arabic number is a year: four digits after "in", "since" ... or in a range (1898-1902)."""
    if form != "arabic" or scale != 1 or not written.isdigit() or not 1000 <= value <= 2099:
        return False
    return bool(_YEAR_BEFORE.search(folded, max(0, start - 24), start) or _YEAR_AFTER.match(folded, end))
