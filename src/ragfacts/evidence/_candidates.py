"""The reference's values shown beside an unsupported mention: of the same kind, closest first."""

from __future__ import annotations

import math
import re
from functools import lru_cache

from ragfacts.evidence._mention import Mention
from ragfacts.evidence._reference import Reference


def reference_candidates(mention: Mention, answer: str, ref: Reference, stated: frozenset[str]) -> tuple[str, ...]:
    """Return the reference's mentions of the mention's kind, as written there, closest first, at most three.

    Closest: sharing the most words around them, then nearest in value (or spelling). Left out: those the
    answer states too (they are not what it replaced), names with neither shared words nor a like spelling,
    and, for a small word number or an ordinal, any that does not count or rank the same word. A Chinese name
    gets first the reference's words in its place (`aligned_name`): jieba does not know every name (it reads 屠呦呦
    as three words), but "袁隆平团队于" against "屠呦呦团队于" shows what was replaced.
    """
    mentions = ref.entities if mention.kind == "entity" else ref.numeric
    pool = [r for r in mentions if not r.loose and r.value not in stated and _comparable(mention, r)]
    if not pool:
        return _aligned(mention, answer, ref, stated)
    if mention.weak:  # "three causes" against "two causes", "第三大" against "第二大"; not "two" against "74 players"
        counted = _counted(answer, mention.end)
        pool = [r for r in pool if counted and _counted(ref.text, r.end) == counted]
    context = _context(answer, mention.start, mention.end)
    scored = []
    for r in pool:
        shared = len(context & _context(ref.text, r.start, r.end))
        distance = _distance(mention, r)
        if not shared and mention.kind == "entity" and distance > 0.5:
            continue  # an unrelated name is no candidate
        scored.append((-shared, distance, r.start, r.text))
    texts: list[str] = []
    for *_, text in sorted(scored):
        if text not in texts:
            texts.append(text)
    aligned = _aligned(mention, answer, ref, stated)  # a Chinese name in the same place comes first
    return (*aligned, *(text for text in texts if text not in aligned))[:3]


def _aligned(mention: Mention, answer: str, ref: Reference, stated: frozenset[str]) -> tuple[str, ...]:
    aligned = aligned_name(mention, answer, ref.text, stated) if mention.family == "cjk" else None
    return (aligned,) if aligned else ()


_CJK = re.compile(r"[\u4e00-\u9fff]+")
_ALIGN_CONTEXT = 2  # Chinese characters after the name that must recur after its stand-in in the reference
_NOT_IN_A_NAME = frozenset("的了是在和与及或由被把为于从对向也都就而并且将已这那其之等个年月日")


def aligned_name(mention: Mention, answer: str, reference: str, stated: frozenset[str]) -> str | None:
    """The reference's characters in the Chinese name's place: a run of two to four Chinese characters followed in
    the reference by the characters that follow the name in the answer, unless the answer states it, it holds a
    function word, its ends are not where jieba's words of the reference end, or jieba reads it as one common word
    (公司, 城市); the closest first (preceded by the name's
    preceding character too, then the longest: 李小明 rather than 小明); None where there is none."""
    after = answer[mention.end : mention.end + _ALIGN_CONTEXT]
    before = answer[mention.start - 1 : mention.start] if mention.start else ""
    if len(after) < _ALIGN_CONTEXT or not _CJK.fullmatch(after):
        return None
    found: list[tuple[int, int, str]] = []
    words = _word_bounds(reference)
    for match in re.finditer(re.escape(after), reference):
        for size in range(2, 5):
            start = match.start() - size
            run = reference[max(0, start) : match.start()]
            if start < 0 or not _CJK.fullmatch(run) or run == mention.text or run in stated:
                continue
            if start not in words or match.start() not in words:  # not "家公司" of 这家/公司
                continue
            if any(character in _NOT_IN_A_NAME for character in run) or not _name_like(run):
                continue
            same_before = bool(before) and reference[start - 1 : start] == before
            found.append((0 if same_before else 1, -size, run))
    return min(found)[2] if found else None


@lru_cache(maxsize=256)
def _word_bounds(text: str) -> frozenset[int]:
    """Where jieba's words of `text` start and end."""
    import jieba

    bounds, position = {0}, 0
    for word in jieba.cut(text):
        position += len(word)
        bounds.add(position)
    return frozenset(bounds)


def _name_like(run: str) -> bool:
    """Whether jieba reads `run` as a name, or not as one known word (it does not know 屠呦呦: three words)."""
    import jieba.posseg  # only Chinese names are aligned, and they are found only where jieba is installed

    words = list(jieba.posseg.cut(run))
    return len(words) > 1 or (words[0].flag in ("nr", "ns", "nrt", "nsf", "nz") and run not in _PLACE_NOUNS)


# Words jieba tags as places that name none: a name in their place is no replaced name.
_PLACE_NOUNS = frozenset(
    (
        "城市",
        "国家",
        "地区",
        "地方",
        "省份",
        "城镇",
        "农村",
        "首都",
        "市区",
        "郊区",
        "当地",
        "全国",
        "世界",
        "海外",
        "国内",
        "国外",
    )
)


def _comparable(mention: Mention, ref: Mention) -> bool:
    if mention.kind == "entity":
        return ref.family == mention.family
    if ref.kind != mention.kind and not (
        {mention.kind, ref.kind} == {"number", "date"} and _year_like(mention) and _year_like(ref)
    ):
        return False
    if mention.kind == "number":
        if mention.weak and _year_like(ref):
            return False
        return (mention.family == "ordinal") == (ref.family == "ordinal") and ref.family != "time"
    if mention.kind == "quantity":
        return ref.family == mention.family
    return True


def _year_like(mention: Mention) -> bool:
    if mention.kind == "date":
        return not mention.decade and mention.date is not None and mention.date[0] is not None
    amount = mention.amount or 0.0
    return mention.family == "cardinal" and amount.is_integer() and 1000 <= amount <= 2099


def _distance(mention: Mention, ref: Mention) -> float:
    if mention.kind == "entity":  # letter pairs in common: Sotomayor is near Javier Sotomayor
        pairs, ref_pairs = _letter_pairs(mention.value), _letter_pairs(ref.value)
        return 1 - len(pairs & ref_pairs) / max(1, len(pairs | ref_pairs))
    a = mention.amount if mention.amount is not None else (mention.date or (0,))[0] or 0
    b = ref.amount if ref.amount is not None else (ref.date or (0,))[0] or 0
    return abs(math.log1p(abs(a)) - math.log1p(abs(b)))


_CONTEXT_WORD = re.compile(r"[a-z]{3,}|[\u4e00-\u9fff]")
_CONTEXT_STOP_LIST = "the and was were has have had are for with that this from its which who also 的 了 是 在 和 于 为"
_CONTEXT_STOP = frozenset(_CONTEXT_STOP_LIST.split())


@lru_cache(maxsize=4096)
def _context(text: str, start: int, end: int, width: int = 40) -> frozenset[str]:
    """The content words and Chinese characters around a mention: what "closest" candidates share with it."""
    window = text[max(0, start - width) : start] + " " + text[end : end + width]
    return frozenset(w for w in _CONTEXT_WORD.findall(window.casefold()) if w not in _CONTEXT_STOP)


_COUNTED = re.compile(r"[\s-]*([a-z]+|[\u4e00-\u9fff])")


def _counted(text: str, end: int) -> str:
    """The word after a number (what it counts or ranks), a plural "s" dropped: "causes" -> "cause", "大"."""
    match = _COUNTED.match(text[end : end + 24].casefold())
    return match.group(1).removesuffix("s") if match else ""


@lru_cache(maxsize=4096)
def _letter_pairs(value: str) -> frozenset[str]:
    return frozenset(value[i : i + 2] for i in range(len(value) - 1))
