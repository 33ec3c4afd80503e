"""Named entities of a text, read for precision: capitalised names in English, quoted names and Latin words in
Chinese; and whether a reference mentions them."""

from __future__ import annotations

import logging
import re
import unicodedata
from collections.abc import Iterable
from dataclasses import dataclass
from functools import lru_cache

from ragfacts.evidence._mention import Mention
from ragfacts.evidence._numerals import fold
from ragfacts.text import normalise

_LATIN = "A-Za-zÀ-ÖØ-öø-ɏ"
_TOKEN = re.compile(rf"(?:[A-Z]\.){{2,}}|[{_LATIN}]+(?:['’\-][{_LATIN}]+)*(?:['’](?![{_LATIN}]))?")
_CJK = re.compile(r"[\u3400-\u4dbf\u4e00-\u9fff\uf900-\ufaff]")
# Lower-case words that may join two capitalised ones into one name: "Bank of England", "Leonardo da Vinci".
_CONNECTORS_LIST = "of de da di du del della der den van von la le al bin ibn y"
_CONNECTORS = frozenset(_CONNECTORS_LIST.split())
# Capitalised words that are not names, or not on their own: function words, sentence openers, labels, months.
_NOT_NAMES_LIST = (
    "a an the and or but if so as of in on at to for from by with about into over under than then that this"
    " these those it its is are was were be been being has have had do does did not no can could will would shall"
    " should may might must which who whom whose what when where why how there here also very just only such each"
    " every all any some more most other i i'm we you he she they me us him her them my our your his their however"
    " therefore thus hence moreover furthermore additionally overall finally first second third firstly secondly"
    " lastly yes note answer question reference summary conclusion according based because although though while"
    " since after before during unlike like despite instead meanwhile today yesterday tomorrow currently recently"
    " originally initially later now please let one two three many several both either neither nor yet it's"
    " mr mrs ms dr prof sir st jr sr january february march april may june july august september october november"
    " december"
)
_NOT_NAMES = frozenset(_NOT_NAMES_LIST.split())
_NOT_NAME_WORDS = _NOT_NAMES | _CONNECTORS
_GENERIC_LATIN = frozenset(("vs", "etc", "ok", "am", "pm", "eg", "ie", "app", "www", "com", "http", "https"))
_LIST_MARKER = re.compile(r"(?:^|\n)[ \t]*\d{1,2}[.)]$")
_TITLE_ABBREVIATIONS = re.compile(r"(?:\b(?:Mr|Mrs|Ms|Dr|Prof|St|Jr|Sr|Mt|vs|No)|\b[A-Z])\.$")
_CJK_QUOTED = re.compile(
    r"《(?P<title>[^《》\n]{1,30})》|「(?P<c1>[^「」\n]{1,20})」|『(?P<c2>[^『』\n]{1,20})』"
    r"|“(?P<q1>[^“”\n]{1,12})”|\"(?P<q2>[^\"\n]{1,12})\""
)
_CLAUSE_PUNCTUATION = re.compile(r"[，。！？；：,.!?;:]")
_GLOSS = re.compile(rf"(?<=[\u4e00-\u9fff])[（(]\s*[{_LATIN}][^（）()\n]*[）)]")


@dataclass(frozen=True, slots=True)
class Token:
    """A Latin-script word and its span in a text."""

    start: int
    end: int
    word: str


def latin_tokens(text: str) -> list[Token]:
    """Return the Latin-script words of `text` (full-width letters folded), with their spans."""
    return [Token(m.start(), m.end(), m.group(0)) for m in _TOKEN.finditer(fold(text))]


def latin_words(text: str) -> frozenset[str]:
    """Return the distinct Latin-script words of `text` (full-width letters folded)."""
    return frozenset(_TOKEN.findall(fold(text)))


def _name_like(text: str, token: Token) -> bool:
    """Whether a word may be (part of) a name: not glued to a digit (HAuCl4, 3D) nor a placeholder (XXXX)."""
    glued = text[token.start - 1 : token.start].isdigit() or text[token.end : token.end + 1].isdigit()
    return not glued and len(set(token.word.casefold())) > 1


@lru_cache(maxsize=65536)
def stem(word: str) -> str:
    """Fold a word for lenient matching: accents, case, dots, a possessive and a plural "s" dropped."""
    if not word.isascii():
        word = "".join(ch for ch in unicodedata.normalize("NFKD", word) if not unicodedata.combining(ch))
    folded = word.casefold().replace(".", "").replace("’", "'")
    if folded.endswith("'s"):
        folded = folded[:-2]
    folded = folded.rstrip("'")
    return folded[:-1] if len(folded) > 3 and folded.endswith("s") and not folded.endswith("ss") else folded


def word_stems(words: Iterable[str]) -> frozenset[str]:
    """Return the stems of every word and hyphenated part of `words`."""
    return frozenset(stem(part) for word in words for part in word.split("-") if part)


_ACRONYM_JOINERS = frozenset(("of", "and", "for", "the", "on", "in", "de"))
_CAP_WORD = rf"(?:[A-Z]\.){{2,}}|[A-ZÀ-ÖØ-Þ][{_LATIN}]*(?:['’\-][{_LATIN}]+)*(?:['’](?![{_LATIN}]))?"
# Capitalised words joined by single spaces, a connector allowed between two: "Bank of England".
_NAME_RUN = re.compile(rf"(?:{_CAP_WORD})(?: (?:(?:{'|'.join(sorted(_CONNECTORS))}) )?(?:{_CAP_WORD}))*")


@lru_cache(maxsize=512)
def _runs(text: str) -> tuple[tuple[Token, ...], ...]:
    """Return the runs of capitalised words of `text` (cached: a reference's are asked for more than once).

    Left out: a word glued to a digit (HAuCl4, 3D), which is a code, and a placeholder (XXXX).
    """
    folded = fold(text)
    runs: list[tuple[Token, ...]] = []
    for match in _NAME_RUN.finditer(folded):
        start, end = match.span()
        if folded[start - 1 : start].isalpha():
            continue  # the capital inside eBay
        words = match.group(0).split(" ")
        tokens: list[Token] = []
        position = start
        for word in words:
            tokens.append(Token(position, position + len(word), word))
            position += len(word) + 1
        if folded[start - 1 : start].isdigit():
            tokens = tokens[1:]
        if folded[end : end + 1].isdigit():
            tokens = tokens[:-1]
        run: list[Token] = []
        for token in tokens:
            if token.word.isupper() and len(set(token.word)) == 1 and len(token.word) > 1:
                if run:
                    runs.append(tuple(run))
                run = []
            else:
                run.append(token)
        if run:
            runs.append(tuple(run))
    return tuple(runs)


def spells_out(letters: str, text: str) -> bool:
    """Whether `text` has a capitalised name with these initials: NASA in "National Aeronautics and Space
    Administration" (joining words such as "and", "of" may come between)."""
    return _spelled_out_pattern(letters.upper()).search(text) is not None


def abbreviates(letters: str, text: str) -> bool:
    """Whether `text` has these letters as an all-capital abbreviation: "US" or "U.S." for the United States."""
    return _abbreviation_pattern(letters.upper()).search(text) is not None


@lru_cache(maxsize=1024)
def _spelled_out_pattern(letters: str) -> re.Pattern[str]:
    joiner = rf"\s+(?:(?:{'|'.join(sorted(_ACRONYM_JOINERS))})\s+)*"
    words = [rf"{re.escape(letter)}[{_LATIN}'’\-]*" for letter in letters]
    first = re.escape(letters[0])
    # The look-behind follows the first letter, so that the engine can skip ahead to it.
    return re.compile(rf"{first}(?<![{_LATIN}]{first})" + joiner.join(words)[len(first) :] + rf"(?![{_LATIN}])")


@lru_cache(maxsize=1024)
def _abbreviation_pattern(letters: str) -> re.Pattern[str]:
    first = re.escape(letters[0])
    dotted = r"\.?".join(map(re.escape, letters))
    return re.compile(rf"{first}(?<![{_LATIN}]{first})" + dotted[len(first) :] + rf"\.?(?![{_LATIN}])")


# Code, fenced or inline: no names, no claims ("x = 1", `SELECT KEY`).
CODE = re.compile(r"```.*?(?:```|$)|`[^`\n]+`", re.DOTALL)


def _capitalised(word: str) -> bool:
    return word[0].isupper() or (word[0].islower() and not word.islower())  # iPhone, eBay


def sentence_start(text: str, position: int) -> bool:
    """Whether `position` opens a sentence, a line or a list item (so a capital there proves nothing)."""
    window = text[max(0, position - 40) : position]  # a bounded look back: this is asked of every capital
    before = window.rstrip(" \t\"'“‘(*_#>•-–")
    if any(mark in window[len(before) :] for mark in "-–•*"):
        return True  # a list item, even run into one line: "as a senior - Earned Class 6A ..."
    if before[-1:] in (".", ")") and (marker := _LIST_MARKER.search(before)):
        before = before[: marker.start()] + "\n"
    if not before or before[-1] in "\n!?:。！？：" or before.endswith("```"):
        return True
    return before[-1] == "." and not _TITLE_ABBREVIATIONS.search(before)


def capitalised_mid_sentence(text: str) -> frozenset[str]:
    """Return the stems of words written capitalised away from a sentence start: evidence that they are names.
    Headings and labels ("**Wait for Storage Adjustment:**") are no evidence: they capitalise every word."""
    return frozenset(
        stem(token.word)
        for run in _runs(text)
        for i, token in enumerate(run)
        if _capitalised(token.word)
        and token.word != "I"
        and (i or not sentence_start(text, token.start))
        and not in_heading(text, token.start)
    )


_LINE_OPENING = re.compile(r"[ \t]*(?:(?:\d{1,2}[.)]|[-*•–])[ \t]+)?(?P<open>#{1,6}[ \t]|\*\*|__)?")


def in_heading(text: str, position: int) -> bool:
    """Whether `position` is in a heading ("### Key Elements of the Benchmark") or a label opening its line in bold
    ("**To Add or Delete Storage:**", "2. **Check Inputs and Formats**:"), where every word may be capitalised."""
    line_start = text.rfind("\n", 0, position) + 1
    opening = _LINE_OPENING.match(text, line_start)
    mark = opening.group("open") if opening else None
    if not mark or not opening or position < opening.end():
        return False
    if mark[0] == "#":
        return True
    close = text.find(mark, opening.end())
    line_end = text.find("\n", line_start)
    if close < 0 or position >= close or 0 <= line_end < close:
        return False
    return text[close - 1 : close] in (":", "：") or text[close + 2 : close + 3] in (":", "：")


def english_entities(text: str, named: frozenset[str], taken: list[Mention], with_words: bool = True) -> list[Mention]:
    """Return the capitalised names of an English text.

    A name at a sentence start counts when it has two words ("Marie Curie won") or its one word is written
    capitalised mid-sentence somewhere (`named`); leading function words are dropped ("In Paris" is Paris).
    Headings and labels ("Key Points:") and words inside a numeric mention ("March") are left out. Without
    `with_words` the names come without the words they are looked up by (enough to show them as candidates).
    """
    covered = _covered(text, taken)
    return [name for run in _runs(text) for name in _name(text, run, named, covered, with_words)]


def _covered(text: str, mentions: list[Mention]) -> bytearray:
    """A mask of the characters inside `mentions` and inside code (`SELECT KEY`, a fenced block): code's capitals
    are keywords and identifiers, no names."""
    mask = bytearray(len(text))
    for start, end in (*((m.start, m.end) for m in mentions), *(m.span() for m in CODE.finditer(text))):
        mask[start:end] = b"\x01" * (end - start)
    return mask


def _joined(text: str, left: Token, right: Token) -> bool:
    return text[left.end : right.start] == " "


def _name(
    text: str, run: tuple[Token, ...], named: frozenset[str], covered: bytearray, with_words: bool
) -> list[Mention]:
    leading = 0
    while leading < len(run) and run[leading].word.casefold() in _NOT_NAME_WORDS:
        leading += 1
    words = run[leading:]
    while words and words[-1].word.casefold() in _NOT_NAME_WORDS:
        words = words[:-1]
    if not words or any(covered[words[0].start : words[-1].end]):
        return []
    start, end = words[0].start, words[-1].end
    if _bold_label(text, start, end) or in_heading(text, start):
        return []  # "3. **Wait for Storage Adjustment:** After ..." labels its item; a heading capitalises all
    if leading == 0 and sentence_start(text, start):
        line_end = text.find("\n", end)
        rest = text[end : len(text) if line_end < 0 else line_end]
        if rest.lstrip(" *_").startswith((":", "：")) or not rest.strip(" *_#"):
            return []  # a label ("Key Points:") or a heading line
        first = words[0].word
        if len(words) > 1 and stem(first) not in named and _verb(first):
            words, start = words[1:], words[1].start  # "Earned Class 6A honours", "Replace IMAGE with": a verb
        elif len(words) == 1 and stem(first) not in named and not (first.isupper() and len(first) > 1):
            return []
    content = [w for w in words if w.word.casefold() not in _CONNECTORS]
    return [_entity(text, start, end, content, "latin", with_words)]


# Verbs that open instructions and the items of lists ("Enable SSO for ...", "Supports JSON ..."): before another
# capitalised word at a sentence start they are no part of a name. Their third person in "s" counts too.
_OPENING_VERBS_LIST = (
    "access add adjust allow apply assign build change check choose click close configure connect copy create"
    " define delete deploy disable download edit enable enter ensure export find follow generate grant import"
    " include install launch load log manage modify monitor move navigate open provide publish read remove rename"
    " replace request restart restore review run save search select send set share specify start stop store"
    " submit support test type update upgrade upload use validate verify view visit wait write"
)
_OPENING_VERBS = frozenset(_OPENING_VERBS_LIST.split())


def _verb(word: str) -> bool:
    """Whether a sentence's capitalised first word is a verb: "Earned", "Using", "Replace", "Enables"."""
    if len(word) > 4 and word.endswith(("ed", "ing", "ly")):
        return True
    folded = word.casefold()
    if not word[1:].islower():
        return False  # ACME, iPhone
    return folded in _OPENING_VERBS or (folded.endswith("s") and folded[:-1] in _OPENING_VERBS)


def _bold_label(text: str, start: int, end: int) -> bool:
    """Whether the words at start:end end a bold label of their line: "**Tax Benefits:**", "**Data Engine**:"."""
    line_start = text.rfind("\n", 0, start) + 1
    return "**" in text[line_start:start] and _LABEL_END.match(text, end) is not None


_LABEL_END = re.compile(r"\s?(?::\s?\*\*|\*\*\s?:)")


def _entity(text: str, start: int, end: int, words: list[Token], family: str, with_words: bool = True) -> Mention:
    parts = tuple(part for w in words for part in w.word.split("-") if part) if with_words else ()
    value = " ".join(w.word.casefold() for w in words)
    return Mention("entity", start, end, text[start:end], value, family=family, words=parts)


def latin_entities(text: str, tokens: list[Token], taken: list[Mention]) -> list[Mention]:
    """Return the Latin-script words of a Chinese text (iPhone, NASA), glosses in brackets after Chinese left out."""
    glosses = [m.span() for m in _GLOSS.finditer(fold(text))]
    found: list[Mention] = []
    run: list[Token] = []
    for token in [*(t for t in tokens if _name_like(text, t)), None]:
        if token is not None and run and _joined(text, run[-1], token):
            run.append(token)
            continue
        if run:
            start, end = run[0].start, run[-1].end
            content = [t for t in run if t.word.casefold() not in _NOT_NAME_WORDS | _GENERIC_LATIN]
            inside = any(s <= start and end <= e for s, e in glosses)
            overlaps = any(m.start < end and start < m.end for m in taken)
            if content and sum(len(t.word) for t in content) > 1 and not inside and not overlaps:
                found.append(_entity(text, start, end, content, "latin"))
        run = [token] if token is not None else []
    return found


# jieba's tags for person and place names, transliterated ones (nrt, nsf) included; its organisation tag (nt)
# catches phrases (日程安排) as often as names.
_SEGMENTED_NAME_TAGS = frozenset(("nr", "ns", "nrt", "nsf"))
_NOT_SEGMENTED_NAMES = frozenset(("东西",))  # "thing", which jieba reads as a place (east-west)


def segmented_names(text: str, taken: list[Mention]) -> list[Mention]:
    """Return the Chinese person and place names of `text` as jieba tags them, outside `taken` mentions.

    Raises:
        ImportError: jieba is not installed (pip install 'jieba>=0.42').
    """
    try:
        import jieba
        import jieba.posseg
    except ImportError as error:
        raise ImportError("chinese_names=True needs jieba: pip install 'jieba>=0.42'") from error
    jieba.setLogLevel(logging.WARNING)  # not its "Building prefix dict" lines on stderr
    covered = _covered(text, taken)
    found: list[Mention] = []
    position = 0
    for word, tag in jieba.posseg.cut(text):
        start, position = position, position + len(word)  # jieba's words cover the text, in order
        if (
            tag in _SEGMENTED_NAME_TAGS
            and len(word) > 1
            and _CJK.search(word)
            and word not in _NOT_SEGMENTED_NAMES
            and not any(covered[start:position])
        ):
            found.append(Mention("entity", start, position, word, normalise(word), family="cjk"))
    return found


def quoted_names(text: str, chinese: bool) -> list[Mention]:
    """Return names in Chinese title and corner brackets (《红楼梦》, 「...」), and in short Chinese quotes.

    Quotation marks (“” and "") count only in Chinese text, around a few Chinese characters without clause
    punctuation: longer or punctuated quotes are quotations, which may be paraphrased.
    """
    found: list[Mention] = []
    for match in _CJK_QUOTED.finditer(text):
        group = match.lastgroup or ""
        inner = match.group(group)
        if group.startswith("q") and not (chinese and _CJK.search(inner) and not _CLAUSE_PUNCTUATION.search(inner)):
            continue
        value = normalise(inner)
        if len(value) > 1:
            found.append(Mention("entity", *match.span(), match.group(0), value, family="cjk"))
    return found
