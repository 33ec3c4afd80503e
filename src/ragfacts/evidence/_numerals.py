"""Numerals as written in English and Chinese: their value and the precision they are written to."""

from __future__ import annotations

import math
import re
from functools import lru_cache

# Same-length folding, so that a match in the folded text is a span of the original: full-width digits, letters
# and signs become ASCII, odd spaces a plain space. The full-width comma stays: "1898年，200人" is two numbers.
_FOLD_MAP = {
    **{chr(0xFF10 + i): str(i) for i in range(10)},
    **{chr(0xFF21 + i): chr(0x41 + i) for i in range(26)},
    **{chr(0xFF41 + i): chr(0x61 + i) for i in range(26)},
    "％": "%",
    "．": ".",
    "＄": "$",
    "￥": "¥",
    "－": "-",
    "／": "/",
    "：": ":",
    "\u3000": " ",
    "\u00a0": " ",
    "\u2009": " ",
    "\u202f": " ",
    "\u2212": "-",
}
_FOLD = str.maketrans(_FOLD_MAP)
_FOLD_FROM = "".join(_FOLD_MAP)


_FOLDABLE = re.compile(f"[{''.join(map(re.escape, _FOLD_FROM))}]")


@lru_cache(maxsize=256)
def fold(text: str) -> str:
    """Return `text` with full-width digits, letters and signs made ASCII; the length is kept (cached: a
    reference is folded for its numbers, its words and its names)."""
    return text.translate(_FOLD) if _FOLDABLE.search(text) else text


# The digits, everyday and financial forms: 〇/零 0, 一/壹 1, 二/贰/两 2 ...
CN_DIGITS = {
    ch: value
    for value, chars in enumerate(("〇零", "一壹", "二贰两", "三叁", "四肆", "五伍", "六陆", "七柒", "八捌", "九玖"))
    for ch in chars
}
_CN_PLACES = {"十": 10, "拾": 10, "百": 100, "佰": 100, "千": 1000, "仟": 1000}
_CN_SECTIONS = {"万": 10**4, "亿": 10**8}
CN_NUMERAL_CHARS = "".join(CN_DIGITS) + "".join(_CN_PLACES) + "".join(_CN_SECTIONS)


def parse_chinese(numeral: str) -> tuple[float, float] | None:
    """Return (value, precision) of a Chinese numeral (一千八百九十八, 两万, 一八九八), or None if malformed.

    A numeral scaled by 万 or 亿 is written to its lowest named place (三千五百万: 1,000,000), like "3.5
    million"; below 万 every place is spelled out and the numeral is exact (二十 is 20, not about 20).
    """
    if not numeral:
        return None
    if all(ch in CN_DIGITS for ch in numeral):
        return float("".join(str(CN_DIGITS[ch]) for ch in numeral)), 1.0
    high = section = pending = 0
    middle = 0
    have_digit = False
    for ch in numeral:
        if ch in CN_DIGITS:
            if have_digit and pending and CN_DIGITS[ch]:
                return None  # 九九八十一 is a rhyme, not a numeral
            pending, have_digit = CN_DIGITS[ch], True
        elif ch in _CN_PLACES:
            section += (pending if have_digit else 1) * _CN_PLACES[ch]
            pending, have_digit = 0, False
        elif ch == "万":
            if not (section or pending or middle or high):
                return None
            middle = (middle + section + pending) * 10**4
            section = pending = 0
            have_digit = False
        elif ch == "亿":
            if not (section or pending or middle or high):
                return None
            high = (high + middle + section + pending) * 10**8
            middle = section = pending = 0
            have_digit = False
        else:
            return None
    value = high + middle + section + pending
    if value <= 0:
        return None
    precision = 1
    while value % (precision * 10) == 0:
        precision *= 10
    return float(value), float(precision if precision >= 10**4 else 1)


_EN_UNITS_LIST = (
    "zero one two three four five six seven eight nine ten eleven twelve thirteen fourteen fifteen sixteen"
    " seventeen eighteen nineteen"
)
_EN_UNITS = _EN_UNITS_LIST.split()
_EN_TENS_LIST = "twenty thirty forty fifty sixty seventy eighty ninety"
_EN_TENS = _EN_TENS_LIST.split()
EN_WORD_VALUES = {word: i for i, word in enumerate(_EN_UNITS)} | {w: 20 + 10 * i for i, w in enumerate(_EN_TENS)}
_EN_ORDINAL_UNITS_LIST = (
    "zeroth first second third fourth fifth sixth seventh eighth ninth tenth eleventh twelfth thirteenth"
    " fourteenth fifteenth sixteenth seventeenth eighteenth nineteenth"
)
_EN_ORDINAL_UNITS = _EN_ORDINAL_UNITS_LIST.split()
_EN_ORDINAL_TENS_LIST = "twentieth thirtieth fortieth fiftieth sixtieth seventieth eightieth ninetieth"
_EN_ORDINAL_TENS = _EN_ORDINAL_TENS_LIST.split()
EN_ORDINAL_VALUES = {w: i for i, w in enumerate(_EN_ORDINAL_UNITS) if i} | {
    w: 20 + 10 * i for i, w in enumerate(_EN_ORDINAL_TENS)
}
_EN_ALL = sorted([*EN_WORD_VALUES, *EN_ORDINAL_VALUES], key=len, reverse=True)
_EN_ONES = sorted([*_EN_UNITS[1:10], *_EN_ORDINAL_UNITS[1:10]], key=len, reverse=True)
# One flat alternation of words (so the regular expression engine can skip ahead), then an optional unit that
# `parse_english` accepts only after a tens word: "twenty-five", "twenty-first", not "ten one".
EN_NUMBER_WORD = rf"(?:{'|'.join(_EN_ALL)})(?:[- ](?:{'|'.join(_EN_ONES)}))?"


def parse_english(words: str) -> tuple[int, bool, int]:
    """Return (value, is ordinal, characters used) of lower-case number words: "twenty-first" is (21, True, 12).

    A second word counts only after a tens word ("ten one" uses "ten" only).
    """
    parts = re.split(r"[- ]", words, maxsplit=1)
    first = parts[0]
    value = EN_WORD_VALUES.get(first, EN_ORDINAL_VALUES.get(first, 0))
    if len(parts) == 1 or first not in _EN_TENS:
        return value, first in EN_ORDINAL_VALUES, len(first)
    second = parts[1]
    return value + EN_WORD_VALUES.get(second, EN_ORDINAL_VALUES.get(second, 0)), second in EN_ORDINAL_VALUES, len(words)


# Scale words after a number, in lower-cased text: "3.5 million", "3.5万", "5千万". Chinese 十/百/千 only before
# 万/亿, or 千/百 alone (but for 千米 and 千克, which are units).
SCALE = (
    r"\s?(?P<en>(?:(?:hundred|thousand|million|billion|trillion)\b\s?)+|(?:bn|mn)\b)"
    r"|(?P<cn>[十百千]?万亿|[十百千]?[万亿]|[百千](?![米克]))"
)
_EN_SCALES = {"hundred": 1e2, "thousand": 1e3, "million": 1e6, "billion": 1e9, "trillion": 1e12, "bn": 1e9, "mn": 1e6}
_CN_SCALES = {"十": 10, "百": 100, "千": 1000, "万": 1e4, "亿": 1e8}


def scale_value(match: re.Match[str]) -> float:
    """Return the multiplier a match of SCALE's groups stands for: "million" 1e6, "千万" 1e7, "万亿" 1e12."""
    if match.group("en"):
        return math.prod(_EN_SCALES[word] for word in match.group("en").casefold().split())
    return math.prod(_CN_SCALES[ch] for ch in match.group("cn"))


def parse_arabic(digits: str) -> tuple[float, float]:
    """Return (value, precision) of "1,898.50" / "1 898": 1898.5 written to 0.01."""
    plain = re.sub(r"[, ]", "", digits)
    decimals = len(plain.partition(".")[2])
    return float(plain), 10.0**-decimals


def format_number(value: float) -> str:
    """Return a number as its shortest plain decimal: 35000, 3.5, 0.25."""
    if value == int(value) and abs(value) < 1e18:
        return str(int(value))
    return f"{value:.6f}".rstrip("0").rstrip(".")


def same_amount(answer: float, precision: float, reference: float, hedged: bool = False) -> bool:
    """Whether `reference` supports an answer's amount written to `precision` (rounding the reference to it).

    "3.5 million" is supported by 3,482,000; "1,898" only by 1,898. A hedged amount ("about 35,000") is
    supported by anything within 10%.
    """
    if math.isclose(answer, reference, rel_tol=1e-9, abs_tol=1e-9):
        return True
    if precision > 0 and math.isclose(math.floor(reference / precision + 0.5) * precision, answer, rel_tol=1e-9):
        return True
    return hedged and abs(answer - reference) <= 0.1 * abs(answer)
